//! The objects: a generational arena shared by every structure.
//!
//! Each slot keeps the object, and apart from it, its place: its
//! generation and where its structure filed it (`node`, `pos`), so a
//! structure reaches an object's place in O(1) and a handle whose
//! generation no longer matches is refused. The objects are kept in an
//! array of their own, the size of the caller's descriptions, so that a
//! first bulk insertion keeps the caller's array itself
//! ([`Store::adopt`]) instead of copying it.

use crate::{Error, Handle, Object};

/// Sentinel for "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// Slots are numbered below this, `2^31 - 1`: a list entry keeps an
/// object's slot and static flag in one `u32` ([`crate::index::Item`]),
/// the flag in the top bit, and `NONE` marks room.
pub(crate) const SLOTS: u32 = (1 << 31) - 1;

/// A slot's place: its generation, and where the structure filed its
/// object. A slot without an object is never filed (`node` is `NONE`).
#[derive(Clone, Copy)]
pub(crate) struct Place {
    generation: u32,
    /// The structure's node holding the object (or `NONE`).
    pub node: u32,
    /// The object's index in that node's item list.
    pub pos: u32,
}

impl Place {
    const NEW: Self = Self {
        generation: 0,
        node: NONE,
        pos: 0,
    };
}

/// Objects by slot index, with a free list and generations.
pub(crate) struct Store<O> {
    /// Every slot's place.
    slots: Vec<Place>,
    /// Every slot's object, `None` for a free slot (as many as `slots`).
    objs: Vec<Option<O>>,
    free: Vec<u32>,
    len: usize,
    /// Objects inserted and removed so far: the same number means the
    /// same objects (the grid's refit needs them unchanged).
    epoch: u64,
}

impl<O> Default for Store<O> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            objs: Vec::new(),
            free: Vec::new(),
            len: 0,
            epoch: 0,
        }
    }
}

impl<V: crate::Vector, T> Store<Object<V, T>> {
    /// Adds an object and returns its handle.
    pub fn insert(&mut self, obj: Object<V, T>) -> Result<Handle, Error> {
        let index = match self.free.pop() {
            Some(i) => {
                self.objs[i as usize] = Some(obj);
                self.slots[i as usize].node = NONE;
                i
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i < SLOTS)
                    .ok_or(Error::TooManyObjects)?;
                self.slots.push(Place::NEW);
                self.objs.push(Some(obj));
                i
            }
        };
        self.len += 1;
        self.epoch += 1;
        Ok(Handle {
            index,
            generation: self.slots[index as usize].generation,
        })
    }

    /// Whether `n` more objects fit: slots are numbered below `SLOTS`.
    ///
    /// # Errors
    /// [`Error::TooManyObjects`] when they do not.
    pub fn room_for(&self, n: usize) -> Result<(), Error> {
        if n <= room(self.slots.len(), self.free.len()) {
            Ok(())
        } else {
            Err(Error::TooManyObjects)
        }
    }

    /// Makes room for `n` more objects (one allocation for a bulk insert).
    pub fn reserve(&mut self, n: usize) {
        let more = n.saturating_sub(self.free.len());
        self.slots.reserve(more);
        self.objs.reserve(more);
    }

    /// Whether the store has never held an object (a cleared store keeps
    /// its slots and their generations, so that old handles stay stale).
    /// [`Store::adopt`] takes an array only then.
    pub fn is_unused(&self) -> bool {
        self.slots.is_empty()
    }

    /// Takes `objs`, every one `Some`, as the objects of an unused store:
    /// slots `0..objs.len()`, in order, each with generation 0. The array
    /// itself is kept, not copied: made from the caller's descriptions
    /// in place (`into_iter().map().collect()` keeps the allocation of
    /// values of the same size), a first bulk insertion writes and
    /// touches only the places (measured: BENCHMARKS.md, the
    /// twenty-seventh session). The caller checked the room
    /// ([`Store::room_for`]).
    pub fn adopt(&mut self, objs: Vec<Option<Object<V, T>>>) {
        debug_assert!(self.is_unused() && self.free.is_empty());
        debug_assert!(objs.iter().all(Option::is_some));
        debug_assert!(objs.len() <= SLOTS as usize);
        self.slots = vec![Place::NEW; objs.len()];
        self.len = objs.len();
        self.epoch += objs.len() as u64;
        self.objs = objs;
        // An array given with far more room than objects is not kept
        // whole (a copy, in that case only).
        if self.objs.capacity() > 2 * self.objs.len() + 64 {
            self.objs.shrink_to_fit();
        }
    }

    /// The slots' objects, `None` for free slots, for batch writes
    /// (spread over threads with `rayon`).
    pub fn objs_mut(&mut self) -> &mut [Option<Object<V, T>>] {
        &mut self.objs
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Place>()
            + self.objs.capacity() * size_of::<Option<Object<V, T>>>()
            + self.free.capacity() * size_of::<u32>()
    }

    /// Checks a handle and returns its slot index. The slot must hold an
    /// object too: a handle of another index may name a free slot with
    /// the generation it has here.
    #[inline]
    pub fn resolve(&self, h: Handle) -> Result<u32, Error> {
        let i = h.index as usize;
        match self.slots.get(i) {
            Some(s) if s.generation == h.generation && self.objs[i].is_some() => Ok(h.index),
            _ => Err(Error::StaleHandle(h)),
        }
    }

    /// Removes the object of a checked slot.
    pub fn remove(&mut self, i: u32) -> Object<V, T> {
        let obj = self.objs[i as usize]
            .take()
            .expect("remove of an empty slot");
        let s = &mut self.slots[i as usize];
        s.node = NONE;
        // A slot whose generation would wrap is retired, so an old handle can
        // never name a new object.
        if s.generation < u32::MAX - 1 {
            s.generation += 1;
            self.free.push(i);
        } else {
            s.generation = u32::MAX;
        }
        self.len -= 1;
        self.epoch += 1;
        obj
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
            generation: self.slots[i as usize].generation,
        }
    }

    /// The place of slot `i` (free or not), or `None` past the last
    /// slot.
    #[inline]
    pub fn get_slot(&self, i: u32) -> Option<&Place> {
        self.slots.get(i as usize)
    }

    /// The object of slot `i`; `None` for a free slot or one past the
    /// last.
    #[inline]
    pub fn get_obj(&self, i: u32) -> Option<&Object<V, T>> {
        self.objs.get(i as usize)?.as_ref()
    }

    /// Asks the processor to bring slot `i` (its place and its object)
    /// near, for a read of it a little later; nothing for a slot past the
    /// end. A hint: it changes nothing.
    #[inline]
    pub fn prefetch_slot(&self, i: u32) {
        self.prefetch_place(i);
        self.prefetch_obj(i);
    }

    /// [`Store::prefetch_slot`] for the place alone.
    #[inline]
    pub fn prefetch_place(&self, i: u32) {
        if let Some(s) = self.get_slot(i) {
            crate::kernel::prefetch(s);
        }
    }

    /// [`Store::prefetch_slot`] for the object alone.
    #[inline]
    pub fn prefetch_obj(&self, i: u32) {
        if let Some(o) = self.objs.get(i as usize) {
            crate::kernel::prefetch(o);
        }
    }

    #[inline]
    pub fn slot(&self, i: u32) -> &Place {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn slot_mut(&mut self, i: u32) -> &mut Place {
        &mut self.slots[i as usize]
    }

    /// The object of a live slot.
    #[inline]
    pub fn obj(&self, i: u32) -> &Object<V, T> {
        self.objs[i as usize]
            .as_ref()
            .expect("slot holds no object")
    }

    #[inline]
    pub fn obj_mut(&mut self, i: u32) -> &mut Object<V, T> {
        self.objs[i as usize]
            .as_mut()
            .expect("slot holds no object")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Number of slots ever allocated (live or free).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Live objects with their handles, in slot order.
    pub fn objects(&self) -> impl Iterator<Item = (Handle, &Object<V, T>)> {
        self.slots
            .iter()
            .zip(&self.objs)
            .enumerate()
            .filter_map(|(i, (s, o))| {
                o.as_ref().map(|o| {
                    (
                        Handle {
                            index: i as u32,
                            generation: s.generation,
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
        Ok(&mut self.obj_mut(slot).value)
    }

    /// Removes every object; handles given so far become stale.
    pub fn clear(&mut self) {
        for i in 0..self.slots.len() {
            if self.objs[i].is_some() {
                self.remove(i as u32);
            }
        }
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
        let it = crate::index::Item::<glam::Vec2>::new(crate::Aabb::empty(), SLOTS - 1, true);
        assert!(!it.is_room() && it.is_static() && it.slot() == SLOTS - 1);
    }
}
