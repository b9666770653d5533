//! The objects: a generational arena shared by every structure.
//!
//! Each slot keeps the object and, apart, its generation, so a handle
//! whose generation no longer matches is refused, and its place: where
//! its structure filed it (`node`, `pos`), so a structure reaches an
//! object's place in O(1).

use crate::{Error, Handle, Object};

/// Sentinel for "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// Slots are numbered below this, `2^31 - 1`: a list entry keeps an
/// object's slot and static flag in one `u32` ([`crate::index::Entry`]),
/// the flag in the top bit, and `NONE` marks room.
pub(crate) const SLOTS: u32 = (1 << 31) - 1;

/// Where a slot's structure filed its object: kept apart from the
/// objects, so that the objects' array is the one a bulk insertion hands
/// over ([`Store::adopt`]) and the searches, which read objects and
/// generations (for the handles they report), read no places.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    /// The structure's node holding the object (or `NONE`).
    pub node: u32,
    /// The object's index in that node's item list.
    pub pos: u32,
}

impl Place {
    const NEW: Self = Self { node: NONE, pos: 0 };
}

/// Objects by slot index, with a free list and generations.
pub(crate) struct Store<O> {
    /// The objects by slot (`None`: a free slot).
    objs: Vec<Option<O>>,
    /// The generations by slot (as long as `objs`).
    gens: Vec<u32>,
    /// The places by slot (as long as `objs`).
    places: Vec<Place>,
    free: Vec<u32>,
    len: usize,
    /// Objects inserted and removed so far: the same number means the
    /// same objects (the grid's refit needs them unchanged).
    epoch: u64,
    /// Times the objects were handed out for writing so far
    /// ([`Store::obj_mut`], [`Store::objs_mut`]): the same number means
    /// no shape changed since (the grid's copy of the boxes is up to date
    /// where it was told of every change since it last had that number).
    writes: u64,
    /// Live objects on no layer (`layer` 0), which no filter keeps: with
    /// none, [`Filter::ALL`](crate::Filter::ALL) keeps every object, and a
    /// query need not read an object's layer ([`Store::keeps_all`]).
    unlayered: usize,
}

impl<O> Default for Store<O> {
    fn default() -> Self {
        Self {
            objs: Vec::new(),
            gens: Vec::new(),
            places: Vec::new(),
            free: Vec::new(),
            len: 0,
            epoch: 0,
            writes: 0,
            unlayered: 0,
        }
    }
}

impl<V: crate::Vector, T> Store<Object<V, T>> {
    /// Adds an object and returns its handle.
    pub fn insert(&mut self, obj: Object<V, T>) -> Result<Handle, Error> {
        let unlayered = usize::from(obj.layer == 0);
        let index = match self.free.pop() {
            Some(i) => {
                self.objs[i as usize] = Some(obj);
                self.places[i as usize].node = NONE;
                i
            }
            None => {
                let i = u32::try_from(self.objs.len())
                    .ok()
                    .filter(|&i| i < SLOTS)
                    .ok_or(Error::TooManyObjects)?;
                self.objs.push(Some(obj));
                self.gens.push(0);
                self.places.push(Place::NEW);
                i
            }
        };
        self.len += 1;
        self.epoch += 1;
        self.unlayered += unlayered;
        Ok(Handle {
            index,
            generation: self.gens[index as usize],
        })
    }

    /// Whether the store has never held an object (no slot at all): a
    /// bulk insertion may then hand it its array ([`Store::adopt`]).
    pub fn is_new(&self) -> bool {
        self.objs.is_empty()
    }

    /// Takes `objs` (every one `Some`) as the objects of a store that has
    /// never held one ([`Store::is_new`]), in slots `0..objs.len()`, as
    /// that many [`Store::insert`]s would, each place's `pos` its slot:
    /// their array is kept as it is, so that a bulk insertion whose
    /// objects were made in place, in the caller's array, copies nothing.
    /// The caller checks the room first ([`Store::room_for`]).
    pub fn adopt(&mut self, objs: Vec<Option<Object<V, T>>>) {
        debug_assert!(self.is_new(), "adopt into a store that has slots");
        debug_assert!(objs.iter().all(Option::is_some), "adopt of a free slot");
        debug_assert!(objs.len() <= SLOTS as usize, "room checked");
        let n = objs.len();
        self.unlayered = objs.iter().flatten().filter(|o| o.layer == 0).count();
        self.objs = objs;
        self.gens = vec![0; n];
        self.places = (0..n as u32).map(|pos| Place { node: NONE, pos }).collect();
        self.len = n;
        self.epoch += n as u64;
    }

    /// Whether `n` more objects fit: slots are numbered below `SLOTS`.
    ///
    /// # Errors
    /// [`Error::TooManyObjects`] when they do not.
    pub fn room_for(&self, n: usize) -> Result<(), Error> {
        if n <= room(self.objs.len(), self.free.len()) {
            Ok(())
        } else {
            Err(Error::TooManyObjects)
        }
    }

    /// Makes room for `n` more objects (one allocation for a bulk insert).
    pub fn reserve(&mut self, n: usize) {
        let more = n.saturating_sub(self.free.len());
        self.objs.reserve(more);
        self.gens.reserve(more);
        self.places.reserve(more);
    }

    /// Checks a handle and returns its slot index.
    #[inline]
    pub fn resolve(&self, h: Handle) -> Result<u32, Error> {
        let i = h.index as usize;
        match (self.gens.get(i), self.objs.get(i)) {
            (Some(&g), Some(Some(_))) if g == h.generation => Ok(h.index),
            _ => Err(Error::StaleHandle(h)),
        }
    }

    /// Removes the object of a checked slot.
    pub fn remove(&mut self, i: u32) -> Object<V, T> {
        let obj = self.objs[i as usize]
            .take()
            .expect("remove of an empty slot");
        self.places[i as usize].node = NONE;
        let g = &mut self.gens[i as usize];
        // A slot whose generation would wrap is retired, so an old handle can
        // never name a new object.
        if *g < u32::MAX - 1 {
            *g += 1;
            self.free.push(i);
        } else {
            *g = u32::MAX;
        }
        self.len -= 1;
        self.epoch += 1;
        self.unlayered -= usize::from(obj.layer == 0);
        obj
    }

    /// Whether `filter` keeps every object now: it keeps every layer and
    /// no object is on none. A query may then report an object its region
    /// holds whole without reading it (only its generation, for the
    /// handle).
    #[inline]
    pub fn keeps_all(&self, filter: crate::Filter) -> bool {
        filter.layers == u32::MAX && self.unlayered == 0
    }

    /// The live objects on no layer, counted (for `validate`).
    pub fn unlayered(&self) -> usize {
        self.unlayered
    }

    /// How many times the set of objects has changed: a new number after
    /// every insertion and removal.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The handle of a live slot.
    #[inline]
    pub fn handle(&self, i: u32) -> Handle {
        Handle {
            index: i,
            generation: self.gens[i as usize],
        }
    }

    /// The place of slot `i` (free or not), or `None` past the last slot.
    #[inline]
    pub fn get_place(&self, i: u32) -> Option<&Place> {
        self.places.get(i as usize)
    }

    /// The place of slot `i` where it holds an object; `None` for a free
    /// slot or past the last one.
    #[inline]
    pub fn live_place(&self, i: u32) -> Option<&Place> {
        self.objs.get(i as usize)?.as_ref()?;
        self.places.get(i as usize)
    }

    /// The object of slot `i`, or `None` for a free slot or past the last
    /// one.
    #[inline]
    pub fn get_obj(&self, i: u32) -> Option<&Object<V, T>> {
        self.objs.get(i as usize)?.as_ref()
    }

    /// Asks the processor to bring the object of slot `i` near, for a
    /// read of it a little later; nothing for a slot past the end. A hint:
    /// it changes nothing.
    #[inline]
    pub fn prefetch_obj(&self, i: u32) {
        prefetch_at(&self.objs, i);
    }

    /// Asks for the generation of slot `i` (which its handle reads), as
    /// [`Store::prefetch_obj`] asks for its object.
    #[inline]
    pub fn prefetch_gen(&self, i: u32) {
        prefetch_at(&self.gens, i);
    }

    /// Asks for the place of slot `i`, for its filing.
    #[inline]
    pub fn prefetch_place(&self, i: u32) {
        prefetch_at(&self.places, i);
    }

    /// Asks for all of slot `i`, for a move of its object: the object,
    /// its generation and its place.
    #[inline]
    pub fn prefetch_slot(&self, i: u32) {
        self.prefetch_obj(i);
        self.prefetch_gen(i);
        self.prefetch_place(i);
    }

    #[inline]
    pub fn place(&self, i: u32) -> &Place {
        &self.places[i as usize]
    }

    /// Every place, in slot order.
    #[inline]
    pub fn places(&self) -> &[Place] {
        &self.places
    }

    /// Every object (`None`: a free slot), in slot order.
    #[inline]
    pub fn objs(&self) -> &[Option<Object<V, T>>] {
        &self.objs
    }

    /// Every object, for batch writes (spread over threads with `rayon`).
    pub fn objs_mut(&mut self) -> &mut [Option<Object<V, T>>] {
        self.writes = self.writes.wrapping_add(1);
        &mut self.objs
    }

    /// How many times the objects were handed out for writing (see the
    /// field of that name).
    #[inline]
    pub fn writes(&self) -> u64 {
        self.writes
    }

    #[inline]
    pub fn place_mut(&mut self, i: u32) -> &mut Place {
        &mut self.places[i as usize]
    }

    /// The object of a live slot.
    #[inline]
    pub fn obj(&self, i: u32) -> &Object<V, T> {
        self.objs[i as usize]
            .as_ref()
            .expect("slot holds no object")
    }

    /// A list entry with its object's box (from its shape); the entry must
    /// be a live object's, not room.
    #[inline]
    pub fn item(&self, e: crate::index::Entry) -> crate::index::Item<V> {
        e.with_box(self.obj(e.slot()).aabb())
    }

    #[inline]
    pub fn obj_mut(&mut self, i: u32) -> &mut Object<V, T> {
        self.writes = self.writes.wrapping_add(1);
        self.objs[i as usize]
            .as_mut()
            .expect("slot holds no object")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Number of slots ever allocated (live or free).
    pub fn capacity(&self) -> usize {
        self.objs.len()
    }

    /// Bytes held (capacities): the objects, their generations and
    /// places, and the free list.
    pub fn memory_bytes(&self) -> usize {
        self.objs.capacity() * size_of::<Option<Object<V, T>>>()
            + self.gens.capacity() * size_of::<u32>()
            + self.places.capacity() * size_of::<Place>()
            + self.free.capacity() * size_of::<u32>()
    }

    /// Live objects with their handles, in slot order.
    pub fn objects(&self) -> impl Iterator<Item = (Handle, &Object<V, T>)> {
        self.objs
            .iter()
            .zip(&self.gens)
            .enumerate()
            .filter_map(|(i, (o, &generation))| {
                o.as_ref().map(|o| {
                    (
                        Handle {
                            index: i as u32,
                            generation,
                        },
                        o,
                    )
                })
            })
    }

    /// The object behind a handle.
    #[inline]
    pub fn get(&self, h: Handle) -> Result<&Object<V, T>, Error> {
        Ok(self.obj(self.resolve(h)?))
    }

    /// The user value behind a handle, mutably.
    #[inline]
    pub fn value_mut(&mut self, h: Handle) -> Result<&mut T, Error> {
        let slot = self.resolve(h)?;
        // Not counted as a write: the value is not the shape.
        Ok(&mut self.objs[slot as usize]
            .as_mut()
            .expect("slot holds no object")
            .value)
    }

    /// Removes every object; handles given so far become stale.
    pub fn clear(&mut self) {
        for i in 0..self.objs.len() {
            if self.objs[i].is_some() {
                self.remove(i as u32);
            }
        }
    }
}

/// Asks for entry `i` of one of the store's arrays (a hint; nothing past
/// the end).
#[inline(always)]
fn prefetch_at<X>(v: &[X], i: u32) {
    if let Some(x) = v.get(i as usize) {
        crate::kernel::prefetch(x);
    }
}

/// How many more objects a store of `slots` slots, `free` of them free,
/// can take: its free slots and the numbers below `SLOTS` not yet used.
fn room(slots: usize, free: usize) -> usize {
    free + (SLOTS as usize).saturating_sub(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_counts_free_slots_and_unused_numbers_below_the_limit() {
        assert_eq!(room(0, 0), SLOTS as usize);
        assert_eq!(room(10, 3), SLOTS as usize - 7);
        // Every number used: only the free slots are left.
        assert_eq!(room(SLOTS as usize, 5), 5);
        assert_eq!(room(SLOTS as usize, 0), 0);
        // A batch one larger than the room is refused by `room_for`.
        let s = Store::<Object<glam::Vec2, ()>>::default();
        assert!(s.room_for(SLOTS as usize).is_ok());
        assert_eq!(s.room_for(SLOTS as usize + 1), Err(Error::TooManyObjects));
        // The largest slot's entry, static, is not room.
        let it = crate::index::Entry::new(SLOTS - 1, true);
        assert!(!it.is_room() && it.is_static() && it.slot() == SLOTS - 1);
    }
}
