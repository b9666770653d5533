//! The objects: a generational arena shared by every structure.
//!
//! Each slot keeps the object and where its structure filed it (`node`,
//! `pos`), so a structure reaches an object's place in O(1) and a handle
//! whose generation no longer matches is refused.

use crate::{Error, Handle, Object};

/// Sentinel for "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// Slots are numbered below this, `2^31 - 1`: a list entry keeps an
/// object's slot and static flag in one `u32` ([`crate::index::Entry`]),
/// the flag in the top bit, and `NONE` marks room.
pub(crate) const SLOTS: u32 = (1 << 31) - 1;

pub(crate) struct Slot<O> {
    generation: u32,
    /// The structure's node holding the object (or `NONE`).
    pub node: u32,
    /// The object's index in that node's item list.
    pub pos: u32,
    pub obj: Option<O>,
}

/// Objects by slot index, with a free list and generations.
pub(crate) struct Store<O> {
    slots: Vec<Slot<O>>,
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
                let s = &mut self.slots[i as usize];
                s.obj = Some(obj);
                s.node = NONE;
                i
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i < SLOTS)
                    .ok_or(Error::TooManyObjects)?;
                self.slots.push(Slot {
                    generation: 0,
                    node: NONE,
                    pos: 0,
                    obj: Some(obj),
                });
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
        self.slots.reserve(n.saturating_sub(self.free.len()));
    }

    /// Checks a handle and returns its slot index.
    #[inline]
    pub fn resolve(&self, h: Handle) -> Result<u32, Error> {
        match self.slots.get(h.index as usize) {
            Some(s) if s.generation == h.generation && s.obj.is_some() => Ok(h.index),
            _ => Err(Error::StaleHandle(h)),
        }
    }

    /// Removes the object of a checked slot.
    pub fn remove(&mut self, i: u32) -> Object<V, T> {
        let s = &mut self.slots[i as usize];
        let obj = s.obj.take().expect("remove of an empty slot");
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

    /// Slot `i` (free or not), or `None` past the last slot.
    #[inline]
    pub fn get_slot(&self, i: u32) -> Option<&Slot<Object<V, T>>> {
        self.slots.get(i as usize)
    }

    /// Asks the processor to bring slot `i` (its place and its object)
    /// near, for a read of it a little later; nothing for a slot past the
    /// end. A hint: it changes nothing.
    #[inline]
    pub fn prefetch_slot(&self, i: u32) {
        if let Some(s) = self.get_slot(i) {
            crate::kernel::prefetch(s);
        }
    }

    #[inline]
    pub fn slot(&self, i: u32) -> &Slot<Object<V, T>> {
        &self.slots[i as usize]
    }

    /// Every slot, in order.
    #[inline]
    pub fn slots(&self) -> &[Slot<Object<V, T>>] {
        &self.slots
    }

    /// Every slot, for batch writes (spread over threads with `rayon`).
    pub fn slots_mut(&mut self) -> &mut [Slot<Object<V, T>>] {
        &mut self.slots
    }

    #[inline]
    pub fn slot_mut(&mut self, i: u32) -> &mut Slot<Object<V, T>> {
        &mut self.slots[i as usize]
    }

    /// The object of a live slot.
    #[inline]
    pub fn obj(&self, i: u32) -> &Object<V, T> {
        self.slots[i as usize]
            .obj
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
        self.slots[i as usize]
            .obj
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
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.obj.as_ref().map(|o| {
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
            if self.slots[i].obj.is_some() {
                self.remove(i as u32);
            }
        }
    }
}

impl<O> Slot<O> {
    /// The object, if the slot is live.
    #[inline]
    pub fn get(&self) -> Option<&O> {
        self.obj.as_ref()
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
