//! Contact events: which pairs started and stopped touching since the
//! last frame, for any structure.

use crate::geometry::Vector;
use crate::{Contact, Pair, SpatialIndex};

/// Tracks the touching pairs of a structure from frame to frame and reports
/// the pairs that started and stopped touching, in a deterministic order
/// (sorted by handles).
///
/// A pair whose object was removed is reported as stopped (its handle is
/// then stale). Buffers are kept between frames, so tracking allocates
/// nothing once warm.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{ContactEvents, ObjectDesc, Quadtree, Shape, SpatialIndex};
/// let mut tree = Quadtree::<&str>::new();
/// let a = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::ZERO, 1.0), "a")).unwrap();
/// let b = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::new(5.0, 0.0), 1.0), "b")).unwrap();
/// let mut events = ContactEvents::new();
/// events.update(&tree);
/// assert!(events.started().is_empty());
/// tree.update(b, Shape::sphere(Vec2::new(1.5, 0.0), 1.0)).unwrap();
/// events.update(&tree);
/// assert_eq!(events.started().len(), 1); // a and b began touching
/// tree.update(b, Shape::sphere(Vec2::new(5.0, 0.0), 1.0)).unwrap();
/// events.update(&tree);
/// assert_eq!(events.stopped()[0].a, a); // and stopped
/// ```
#[derive(Clone, Debug, Default)]
pub struct ContactEvents {
    touching: Vec<Pair>,
    previous: Vec<Pair>,
    started: Vec<Pair>,
    stopped: Vec<Pair>,
}

impl ContactEvents {
    /// A tracker that has seen no frame yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Finds the structure's pairs for this frame and compares them with the
    /// last frame's. A game that searches its contacts anyway gives them
    /// to [`ContactEvents::observe`] instead, and saves a second search.
    pub fn update<V: Vector, T, S: SpatialIndex<V, T>>(&mut self, index: &S) {
        core::mem::swap(&mut self.touching, &mut self.previous);
        index.pairs(&mut self.touching);
        self.compare();
    }

    /// Takes this frame's touching pairs as found by the game's own search
    /// (for instance the pairs of [`SpatialIndex::contacts`], through
    /// [`Contact::pair`]) and compares them with the last frame's: the
    /// same events as [`ContactEvents::update`], without a second pair
    /// search. A pair given twice counts once.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{ContactEvents, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<&str>::new();
    /// let a = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::ZERO, 1.0), "a")).unwrap();
    /// let b = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::new(1.5, 0.0), 1.0), "b")).unwrap();
    /// let mut events = ContactEvents::new();
    /// let mut contacts = Vec::new();
    /// tree.contacts(&mut contacts); // the frame's one search
    /// events.observe(contacts.iter().map(|c| c.pair()));
    /// assert_eq!(events.started().len(), 1);
    /// // The started pair's contact record, from the same search.
    /// let first = contacts.iter().find(|c| c.pair() == events.started()[0]).unwrap();
    /// assert_eq!((first.a, first.b, first.depth), (a, b, 0.5));
    /// ```
    pub fn observe(&mut self, touching: impl IntoIterator<Item = Pair>) {
        core::mem::swap(&mut self.touching, &mut self.previous);
        self.touching.clear();
        self.touching.extend(touching);
        self.compare();
    }

    /// The contact records of the pairs that started touching this frame,
    /// taken from this frame's contacts (those whose pairs were given to
    /// [`ContactEvents::observe`]), in the order of `contacts`: a game gets
    /// each new contact's point, normal and depth from its one search.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{ContactEvents, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<&str>::new();
    /// let a = tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "a")).unwrap();
    /// let b = tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(1.5, 0.0), 1.0), "b")).unwrap();
    /// let (mut events, mut contacts) = (ContactEvents::new(), Vec::new());
    /// tree.contacts(&mut contacts);
    /// events.observe(contacts.iter().map(|c| c.pair()));
    /// let new: Vec<_> = events.started_in(&contacts).collect();
    /// assert_eq!((new[0].a, new[0].b, new[0].depth), (a, b, 0.5));
    /// // Next frame, still touching: nothing new.
    /// tree.contacts(&mut contacts);
    /// events.observe(contacts.iter().map(|c| c.pair()));
    /// assert_eq!(events.started_in(&contacts).count(), 0);
    /// ```
    pub fn started_in<'c, V: Vector>(
        &'c self,
        contacts: &'c [Contact<V>],
    ) -> impl Iterator<Item = &'c Contact<V>> + 'c {
        contacts
            .iter()
            .filter(|c| self.started.binary_search(&c.pair()).is_ok())
    }

    /// Sorts this frame's pairs and merges them with the last frame's.
    fn compare(&mut self) {
        self.touching.sort_unstable();
        self.touching.dedup();
        self.started.clear();
        self.stopped.clear();
        // Merge the two sorted lists.
        let (mut i, mut j) = (0, 0);
        let (now, before) = (&self.touching, &self.previous);
        while i < now.len() || j < before.len() {
            match (now.get(i), before.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => {
                    self.started.push(*x);
                    i += 1;
                }
                (Some(x), None) => {
                    self.started.push(*x);
                    i += 1;
                }
                (_, Some(y)) => {
                    self.stopped.push(*y);
                    j += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
    }

    /// Pairs touching now and not in the previous frame, sorted.
    pub fn started(&self) -> &[Pair] {
        &self.started
    }

    /// Pairs touching in the previous frame and not now, sorted.
    pub fn stopped(&self) -> &[Pair] {
        &self.stopped
    }

    /// Every pair touching now, sorted.
    pub fn touching(&self) -> &[Pair] {
        &self.touching
    }

    /// Forgets every pair: the next update reports all touching pairs as
    /// started.
    pub fn reset(&mut self) {
        self.touching.clear();
        self.previous.clear();
        self.started.clear();
        self.stopped.clear();
    }
}
