//! The iterator forms of the queries ([`SpatialIndex::objects_in`],
//! [`SpatialIndex::objects_within`], [`SpatialIndex::nearest`]): a query's
//! results as `(handle, object)` items, for a caller that would rather
//! loop than keep a `Vec` of handles.
//!
//! The query runs when the iterator is made, into a buffer taken from a
//! small per-thread pool and given back when the iterator is dropped, so
//! a warm loop of these queries allocates nothing.

use core::cell::RefCell;
use core::marker::PhantomData;
use std::thread::LocalKey;

use crate::{Handle, Neighbor, Object, SpatialIndex, Vector};

/// Buffers each thread keeps for the iterators (one per iterator alive at
/// once; more are allocated, and dropped, when more are alive).
const POOLED: usize = 4;

thread_local! {
    static HANDLES: RefCell<Vec<Vec<Handle>>> = const { RefCell::new(Vec::new()) };
    static NEIGHBORS: RefCell<Vec<Vec<Neighbor>>> = const { RefCell::new(Vec::new()) };
}

mod sealed {
    /// Keeps [`super::FoundItem`] to sparti's own types.
    pub trait Sealed {}
    impl Sealed for crate::Handle {}
    impl Sealed for crate::Neighbor {}
}

/// What a [`Found`] iterator yields beside each object: a [`Handle`] (the
/// region queries) or a [`Neighbor`] (the nearest search, with the
/// distance). Implemented by those two types only.
pub trait FoundItem: sealed::Sealed + Copy + Sized + 'static {
    /// This thread's pool of buffers of this type.
    #[doc(hidden)]
    fn pool() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>>;
    /// The object's handle.
    #[doc(hidden)]
    fn handle(&self) -> Handle;
}

impl FoundItem for Handle {
    fn pool() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &HANDLES
    }
    fn handle(&self) -> Handle {
        *self
    }
}

impl FoundItem for Neighbor {
    fn pool() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &NEIGHBORS
    }
    fn handle(&self) -> Handle {
        self.handle
    }
}

/// A buffer from this thread's pool (an empty new one if the pool is
/// empty, borrowed or gone).
pub(crate) fn take<E: FoundItem>() -> Vec<E> {
    E::pool()
        .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Gives a buffer back to this thread's pool (dropped if the pool is full).
fn give<E: FoundItem>(mut buf: Vec<E>) {
    if buf.capacity() == 0 {
        return;
    }
    buf.clear();
    let _ = E::pool().try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut()
            && p.len() < POOLED
        {
            p.push(buf);
        }
    });
}

/// The results of a query, as `(item, &object)`: see
/// [`SpatialIndex::objects_in`], [`SpatialIndex::objects_within`] and
/// [`SpatialIndex::nearest`]. `E` is [`Handle`] for the region queries
/// (the items are handles) or [`Neighbor`] for the nearest search (the
/// items carry the distance).
///
/// The index stays borrowed while the iterator lives, so the results
/// cannot go stale.
pub struct Found<'a, V: Vector, T, S: ?Sized, E: FoundItem> {
    index: &'a S,
    items: Vec<E>,
    next: usize,
    _objects: PhantomData<fn() -> &'a Object<V, T>>,
}

impl<'a, V: Vector, T, S: SpatialIndex<V, T> + ?Sized, E: FoundItem> Found<'a, V, T, S, E> {
    /// The iterator over `items`, found in `index`.
    pub(crate) fn new(index: &'a S, items: Vec<E>) -> Self {
        Self {
            index,
            items,
            next: 0,
            _objects: PhantomData,
        }
    }
}

impl<V: Vector, T, S: ?Sized, E: FoundItem> Drop for Found<'_, V, T, S, E> {
    fn drop(&mut self) {
        give(core::mem::take(&mut self.items));
    }
}

impl<'a, V: Vector, T: 'a, S: SpatialIndex<V, T> + ?Sized, E: FoundItem> Iterator
    for Found<'a, V, T, S, E>
{
    type Item = (E, &'a Object<V, T>);

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(&item) = self.items.get(self.next) {
            self.next += 1;
            // The handles come from a query on this borrowed index: always
            // live. Were one not, it would be skipped, never a panic.
            if let Ok(o) = self.index.get(item.handle()) {
                return Some((item, o));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.items.len() - self.next;
        (left, Some(left))
    }
}

impl<'a, V: Vector, T: 'a, S: SpatialIndex<V, T> + ?Sized, E: FoundItem> ExactSizeIterator
    for Found<'a, V, T, S, E>
{
}
