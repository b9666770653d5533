//! Every node's object list in one array: a node holds a [`Block`] of
//! [`Lists`], not a heap `Vec` of its own.
//!
//! A node's objects are contiguous (`items[start..start + len]`) and
//! blocks never overlap. A block that fills up moves to the end of the
//! array with twice the room (or grows in place when it is the last one);
//! the room it leaves behind is abandoned. When the abandoned room
//! outweighs the objects, the kernel rewrites the array with the blocks in
//! depth-first order of the tree ([`super::Core::tidy`]): each subtree's
//! objects are then one run of memory (with the room the rewrite leaves
//! large lists to grow in, [`SLACK`]), as the pair search and the queries
//! walk them, and nothing is allocated per node.
//!
//! An object's position in its node's list (`Slot::pos`) is relative to
//! the block, so moving a block changes no object's position.
//!
//! An entry is the object's slot and static flag ([`Entry`]), four bytes:
//! the box is not copied here. The store holds each object's shape and
//! the grid its box in the order the searches read; what reads the boxes
//! of a node's objects (a split, the tree's own pair search and query
//! walks, the query boxes) takes them from the store.

use crate::index::Entry;

/// A node's object list: `len` objects at `start` of [`Lists::items`], in
/// room for `cap`. A list without room is `Block::default()` (start 0), so
/// that no block points past the array's end when the array shrinks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Block {
    pub start: u32,
    pub len: u32,
    pub cap: u32,
}

impl Block {
    /// Number of objects in the list.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the list holds no object.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The list's range of [`Lists::items`].
    #[inline]
    pub fn range(&self) -> core::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// The array holding every node's objects.
#[derive(Debug)]
pub(crate) struct Lists {
    /// The blocks, and the room between them.
    items: Vec<Entry>,
    /// Room in `items` that belongs to no block (free or abandoned).
    pub abandoned: usize,
    /// Free blocks of room `k` for `k` below [`SMALL`], by `k`: their
    /// starts. A list that moves or empties gives its room back here, and
    /// the next list of that size takes it, so a scene whose objects
    /// change nodes every frame reuses room instead of abandoning it.
    pub free: [Vec<u32>; SMALL],
    /// The room in the free lists.
    free_room: usize,
    /// Objects in the blocks.
    objects: usize,
    /// The rewrite's buffer (empty between rewrites: keeping it would
    /// double the memory for an allocation saved every few frames).
    spare: Vec<Entry>,
    /// Objects copied by the rewrite under way (checked at its end).
    copied: usize,
    /// Changes so far that moved an entry already in the array (a block
    /// moved, an entry taken out, a rewrite): an entry's place is the
    /// one it was given while this stays the same.
    pub moves: u64,
}

impl Default for Lists {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            abandoned: 0,
            free: core::array::from_fn(|_| Vec::new()),
            free_room: 0,
            objects: 0,
            spare: Vec::new(),
            copied: 0,
            moves: 0,
        }
    }
}

/// Entries a rewrite leaves room for beyond half the objects, so small
/// trees are not rewritten for every list that moves.
const HEADROOM: usize = 16;

/// Lists of room below this are recycled through free lists.
pub(crate) const SMALL: usize = 65;

/// A rewrite leaves each list of [`SMALL`] objects or more room for
/// `1 / SLACK` more (rounded down): room that the objects arriving in a
/// node fill before its list must move. Without it, the first arrival in
/// every such node after a rewrite moved its list and abandoned its room,
/// and a scene where a few objects change node every frame (a crowd in
/// motion: 0.45% of a million) abandoned as much room as it held objects
/// in a frame or two, and was rewritten nearly every frame (measured: 6
/// rewrites in 8 frames at 1M). Smaller lists get no slack: their room
/// goes to the free lists when they move, and is taken again.
pub(crate) const SLACK: usize = 8;

/// The slack a rewrite leaves a list of `len` objects ([`SLACK`]).
#[inline]
fn slack(len: u32) -> u32 {
    if len as usize >= SMALL {
        len / SLACK as u32
    } else {
        0
    }
}

/// An entry of the array's unused room.
fn filler() -> Entry {
    Entry::room()
}

impl Lists {
    /// Every entry: the blocks and the room between them.
    #[inline]
    pub fn entries(&self) -> &[Entry] {
        &self.items
    }

    /// The objects of a block, mutably.
    #[cfg(test)]
    #[inline]
    pub fn get_mut(&mut self, b: Block) -> &mut [Entry] {
        &mut self.items[b.range()]
    }

    /// Makes room in `b` for `extra` more objects: in place when `b` ends
    /// the array, else as a new block with (at least) twice the room (a
    /// free one of that size, or at the end), the old one given up.
    fn make_room(&mut self, b: &mut Block, extra: u32) {
        let need = b.len + extra;
        if need <= b.cap {
            return;
        }
        let cap = need.max(b.cap * 2).max(1);
        if b.cap > 0 && (b.start + b.cap) as usize == self.items.len() {
            self.items.resize(b.start as usize + cap as usize, filler());
            b.cap = cap;
            return;
        }
        let old = *b;
        self.moves += u64::from(old.len > 0);
        let start = match self.free.get_mut(cap as usize).and_then(Vec::pop) {
            Some(start) => {
                self.abandoned -= cap as usize;
                self.free_room -= cap as usize;
                let at = start as usize;
                self.items.copy_within(old.range(), at);
                self.items[at + old.len()..at + cap as usize].fill(filler());
                start
            }
            None => {
                let start = self.items.len();
                self.items.reserve(cap as usize);
                self.items.extend_from_within(old.range());
                self.items.resize(start + cap as usize, filler());
                start as u32
            }
        };
        *b = Block {
            start,
            len: old.len,
            cap,
        };
        self.give_up(old);
    }

    /// Gives up the room of a block no node holds any more: the array's
    /// end is cut off; a small block goes to its free list; a larger one
    /// is abandoned until the next rewrite.
    fn give_up(&mut self, b: Block) {
        if b.cap == 0 {
            return;
        }
        if (b.start + b.cap) as usize == self.items.len() {
            self.items.truncate(b.start as usize);
            return;
        }
        // Room holds no stale copies: the grid's search reads the whole
        // array, skipping the fillers.
        self.items[b.start as usize..(b.start + b.cap) as usize].fill(filler());
        self.abandoned += b.cap as usize;
        if let Some(free) = self.free.get_mut(b.cap as usize) {
            free.push(b.start);
            self.free_room += b.cap as usize;
        }
    }

    /// Makes room for `n` more objects in the array, exactly.
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve_exact(n);
    }

    /// Appends an object to `b`, returning its position in the list.
    #[inline]
    pub fn push(&mut self, b: &mut Block, it: Entry) -> u32 {
        if b.len == b.cap {
            self.make_room(b, 1);
        }
        self.items[(b.start + b.len) as usize] = it;
        b.len += 1;
        self.objects += 1;
        b.len - 1
    }

    /// Appends objects to `b`, returning the position of the first.
    pub fn extend(&mut self, b: &mut Block, its: impl ExactSizeIterator<Item = Entry>) -> u32 {
        let base = b.len;
        let len = its.len();
        self.make_room(b, len as u32);
        let at = (b.start + b.len) as usize;
        for (e, it) in self.items[at..at + len].iter_mut().zip(its) {
            *e = it;
        }
        b.len += len as u32;
        self.objects += len;
        base
    }

    /// Takes object `i` out of `b`, the last one taking its place; returns
    /// the slot of the object now at `i`, if one moved there.
    #[inline]
    pub fn swap_remove(&mut self, b: &mut Block, i: usize) -> Option<u32> {
        let last = (b.start + b.len - 1) as usize;
        let at = b.start as usize + i;
        self.moves += 1;
        let items = &mut self.items;
        items[at] = items[last];
        items[last] = filler();
        b.len -= 1;
        self.objects -= 1;
        let moved = (at != last).then(|| self.items[at].slot());
        if b.len == 0 {
            // An empty list keeps no room: most empty nodes are leaves
            // waiting to be pruned.
            self.release(b);
        }
        moved
    }

    /// Gives up a block's room (its list must be empty).
    fn release(&mut self, b: &mut Block) {
        debug_assert_eq!(b.len, 0, "a released block holds objects");
        self.give_up(*b);
        *b = Block::default();
    }

    /// True when a rewrite is due: the abandoned room (not counting the
    /// free lists, whose room is reused) is more than half the objects
    /// (each rewrite costs about one pass over the objects and the nodes,
    /// so its cost per abandoned entry stays bounded), or the array holds
    /// room for more than three times the objects (most were removed: the
    /// memory goes back).
    #[inline]
    pub fn untidy(&mut self) -> bool {
        self.abandoned - self.free_room > self.objects / 2 + HEADROOM
            || self.items.capacity() > 3 * self.objects + 2 * HEADROOM
    }

    /// Starts a rewrite: blocks are then copied one by one with
    /// [`Lists::rewrite_block`] and the rewrite ends with
    /// [`Lists::finish_rewrite`].
    pub fn start_rewrite(&mut self) {
        self.moves += 1;
        self.spare = Vec::with_capacity(self.objects + self.objects / SLACK);
        self.copied = 0;
    }

    /// Copies a block to the rewrite, with room for its objects and, for
    /// a list of [`SMALL`] objects or more, `1 / SLACK` more.
    #[inline]
    pub fn rewrite_block(&mut self, b: &mut Block) {
        if b.len == 0 {
            *b = Block::default();
            return;
        }
        let start = self.spare.len() as u32;
        self.spare.extend_from_slice(&self.items[b.range()]);
        self.copied += b.len();
        let cap = b.len + slack(b.len);
        self.spare.resize(start as usize + cap as usize, filler());
        b.start = start;
        b.cap = cap;
    }

    /// Ends a rewrite: the blocks not copied are dropped. The array keeps
    /// its allocation, so in a steady scene its memory stays flat (lists
    /// move, the rewrites follow); it shrinks when it holds room for more
    /// than three times the objects, to room for half as many again, the
    /// room the lists that move take until the next rewrite.
    pub fn finish_rewrite(&mut self) {
        for f in &mut self.free {
            f.clear();
        }
        self.free_room = 0;
        self.items.clear();
        self.items.extend_from_slice(&self.spare);
        self.abandoned = 0;
        let live = self.objects;
        debug_assert_eq!(live, self.copied, "a rewrite copies every object");
        if self.items.capacity() > 3 * live + 2 * HEADROOM {
            self.items.shrink_to(live + live / 2 + HEADROOM);
        }
        self.spare = Vec::new();
    }

    /// Drops every block.
    pub fn clear(&mut self) {
        for f in &mut self.free {
            f.clear();
        }
        self.free_room = 0;
        self.items.clear();
        self.abandoned = 0;
        self.objects = 0;
    }

    /// Objects in the blocks.
    pub fn objects(&self) -> usize {
        self.objects
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.items.capacity() * size_of::<Entry>()
            + self.free.iter().map(Vec::capacity).sum::<usize>() * size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(slot: u32) -> Entry {
        Entry::new(slot, false)
    }

    /// A rewrite leaves a large list room for 1/8 more objects, which the
    /// next arrivals take without moving it; a small list gets none.
    #[test]
    fn a_rewrite_leaves_large_lists_slack() {
        let mut lists = Lists::default();
        let (mut big, mut small) = (Block::default(), Block::default());
        let (mut at_64, mut at_65) = (Block::default(), Block::default());
        let its: Vec<_> = (0..100).map(item).collect();
        lists.extend(&mut big, its.iter().copied());
        lists.extend(&mut small, its[..10].iter().copied());
        lists.extend(&mut at_64, its[..64].iter().copied());
        lists.extend(&mut at_65, its[..65].iter().copied());
        lists.start_rewrite();
        for b in [&mut big, &mut small, &mut at_64, &mut at_65] {
            lists.rewrite_block(b);
        }
        lists.finish_rewrite();
        assert_eq!((big.len, big.cap), (100, 112));
        assert_eq!((small.len, small.cap), (10, 10));
        assert_eq!((at_64.len, at_64.cap), (64, 64), "below SMALL: no slack");
        assert_eq!((at_65.len, at_65.cap), (65, 73), "from SMALL: 65 / 8 more");
        assert_eq!(
            lists.entries().len(),
            112 + 10 + 64 + 73,
            "the array is the blocks"
        );
        let slots = |b: Block, lists: &mut Lists| {
            lists.entries()[b.range()]
                .iter()
                .map(|it| it.slot())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            slots(big, &mut lists),
            (0..100).collect::<Vec<_>>(),
            "the objects, in order"
        );
        assert!(
            lists.entries()[big.range().end..(big.start + big.cap) as usize]
                .iter()
                .all(|it| it.is_room()),
            "the slack holds fillers"
        );
        let start = big.start;
        for s in 100..112 {
            lists.push(&mut big, item(s));
        }
        assert_eq!(
            (big.start, big.len, lists.abandoned),
            (start, 112, 0),
            "no move"
        );
        lists.push(&mut big, item(112));
        assert_ne!(big.start, start, "the list full, it moves");
        assert_eq!(lists.abandoned, 112, "its old room abandoned");
        assert_eq!(
            slots(small, &mut lists),
            (0..10).collect::<Vec<_>>(),
            "the small list untouched"
        );
    }
}
