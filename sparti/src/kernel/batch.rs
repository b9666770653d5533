//! The batch update ([`update_many`]): a frame's moves checked, and a
//! large batch applied in phases, on rayon's threads with the feature
//! (see [`apply_in_phases`]). The tables it needs live in the structure
//! between batches ([`Batch`]), so that a frame allocates nothing once
//! warm.

use core::sync::atomic::{AtomicU32, Ordering};

use super::{Family, Move, prefetch, update_checked};
use crate::geometry::{Aabb, Shape, Vector};
use crate::store::NONE;
use crate::{Error, Handle};

/// Moves from which [`update_many`] checks on rayon's threads (with the
/// feature), entering rayon's pool once for the whole batch (the
/// kernel's `in_pool`). Built for fuzzing, any batch of two or more
/// takes that path, so the fuzzer checks it on small batches.
#[cfg(not(fuzzing))]
const PAR_MOVES: usize = 4096;
#[cfg(fuzzing)]
const PAR_MOVES: usize = 2;

/// Moves from which [`update_many`] applies a batch in phases
/// ([`apply_in_phases`]): with rayon's threads, from [`PAR_MOVES`]; on one
/// thread the phases only beat the loop where the tree no longer fits the
/// cache (measured: 8% faster at 1M objects, even at 100k, slower at 10k;
/// BENCHMARKS.md, fifth session).
#[cfg(any(feature = "rayon", fuzzing))]
const PHASED_MOVES: usize = PAR_MOVES;
#[cfg(not(any(feature = "rayon", fuzzing)))]
const PHASED_MOVES: usize = 1 << 18;

/// `f` of every element of `src`, its two halves into `a` and `b`, in
/// order: on rayon's threads with the feature.
fn map2_into<A: Sync, R: Send, Q: Send>(
    src: &[A],
    a: &mut Vec<R>,
    b: &mut Vec<Q>,
    f: impl Fn(&A) -> (R, Q) + Sync + Send,
) {
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        src.par_iter().map(f).unzip_into_vecs(a, b);
        return;
    }
    a.clear();
    b.clear();
    for (r, q) in src.iter().map(f) {
        a.push(r);
        b.push(q);
    }
}

/// `f` of every element of `src`, its three parts into `a`, `b` and `c`
/// (as long as `src`), in order: on rayon's threads with the feature, by
/// chunks of [`FILL_CHUNK`]. `f` gets the element's chunk of `src` and
/// its position there (so that it may look ahead).
fn fill3<S: Sync, A: Send, B: Send, C: Send>(
    src: &[S],
    a: &mut [A],
    b: &mut [B],
    c: &mut [C],
    f: impl Fn(&[S], usize) -> (A, B, C) + Sync + Send,
) {
    debug_assert!(a.len() == src.len() && b.len() == src.len() && c.len() == src.len());
    let chunk = |x: &mut [A], y: &mut [B], z: &mut [C], s: &[S]| {
        for (j, ((x, y), z)) in x.iter_mut().zip(y.iter_mut()).zip(z.iter_mut()).enumerate() {
            (*x, *y, *z) = f(s, j);
        }
    };
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        a.par_chunks_mut(FILL_CHUNK)
            .zip(b.par_chunks_mut(FILL_CHUNK))
            .zip(c.par_chunks_mut(FILL_CHUNK))
            .zip(src.par_chunks(FILL_CHUNK))
            .for_each(|(((x, y), z), s)| chunk(x, y, z, s));
        return;
    }
    a.chunks_mut(FILL_CHUNK)
        .zip(b.chunks_mut(FILL_CHUNK))
        .zip(c.chunks_mut(FILL_CHUNK))
        .zip(src.chunks(FILL_CHUNK))
        .for_each(|(((x, y), z), s)| chunk(x, y, z, s));
}

/// Elements per task of [`fill3`] (built for fuzzing, a few, so that the
/// fuzzer's small batches have several).
#[cfg(not(fuzzing))]
const FILL_CHUNK: usize = 2048;
#[cfg(fuzzing)]
const FILL_CHUNK: usize = 3;

/// `v` made `n` long, to be overwritten: its elements kept where it is
/// long enough (no pass over them), `fill` added where it is not.
fn overwritable<X: Clone>(v: &mut Vec<X>, n: usize, fill: X) -> &mut [X] {
    if v.len() < n {
        v.resize(n, fill);
    } else {
        v.truncate(n);
    }
    v
}

/// `f` of the elements of `a` and `b` at each position, into `out`, in
/// order: on rayon's threads with the feature.
fn map_into_zip<A: Sync, B: Sync, R: Send>(
    a: &[A],
    b: &[B],
    out: &mut Vec<R>,
    f: impl Fn(&A, &B) -> R + Sync + Send,
) {
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        a.par_iter()
            .zip(b.par_iter())
            .map(|(x, y)| f(x, y))
            .collect_into_vec(out);
        return;
    }
    out.clear();
    out.extend(a.iter().zip(b).map(|(x, y)| f(x, y)));
}

/// `f` of every pair of chunks of `size` elements of `a` and `b` at the
/// same position: on rayon's threads with the feature.
fn zip_chunks<A: Send, B: Sync>(
    a: &mut [A],
    b: &[B],
    size: usize,
    f: impl Fn(&mut [A], &[B]) + Sync + Send,
) {
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        a.par_chunks_mut(size)
            .zip(b.par_chunks(size))
            .for_each(|(x, y)| f(x, y));
        return;
    }
    a.chunks_mut(size)
        .zip(b.chunks(size))
        .for_each(|(x, y)| f(x, y));
}

/// Store slots per task of [`apply_in_phases`]' writes of the kept
/// moves' shapes (built for fuzzing, a few).
#[cfg(not(fuzzing))]
const GATHER_CHUNK: usize = 4096;
#[cfg(fuzzing)]
const GATHER_CHUNK: usize = 5;
/// How many slots ahead those writes ask for a move's data.
const GATHER_AHEAD: usize = 16;

/// `f` of every index of `0..n`: on rayon's threads with the feature.
fn each_index(n: usize, f: impl Fn(usize) + Sync + Send) {
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        (0..n).into_par_iter().for_each(f);
        return;
    }
    (0..n).for_each(f);
}

/// The sum of `f` of every part of `a` with the chunk of `size` elements
/// of `b` at the same position (`a` has one part per chunk) and the
/// part's position: on rayon's threads with the feature.
fn sum_zip_chunks<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    size: usize,
    f: impl Fn(usize, &mut A, &mut [B]) -> u64 + Sync + Send,
) -> u64 {
    debug_assert_eq!(a.len(), b.len().div_ceil(size));
    #[cfg(feature = "rayon")]
    if !super::one_thread() {
        use rayon::prelude::*;
        return a
            .par_iter_mut()
            .zip(b.par_chunks_mut(size))
            .enumerate()
            .map(|(c, (x, y))| f(c, x, y))
            .sum();
    }
    a.iter_mut()
        .zip(b.chunks_mut(size))
        .enumerate()
        .map(|(c, (x, y))| f(c, x, y))
        .sum()
}

/// A table of `u32` that the threads of one pass write at places of their
/// own (relaxed atomics: plain loads and stores on x86-64), grown with
/// `NONE`; [`apply_in_phases`] clears each entry it wrote as it reads it.
#[derive(Default)]
struct Table(Vec<AtomicU32>);

impl Table {
    /// At least `n` entries (the new ones `NONE`).
    fn grow_to(&mut self, n: usize) {
        if self.0.len() < n {
            self.0.resize_with(n, || AtomicU32::new(NONE));
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        self.0[i].load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&self, i: usize, v: u32) {
        self.0[i].store(v, Ordering::Relaxed);
    }

    /// Bytes held.
    fn memory(&self) -> usize {
        self.0.capacity() * 4
    }
}

/// Moves per part of [`apply_in_phases`]' decision pass: each part lists
/// the moves it leaves to phase 3, and the parts are applied in order
/// (built for fuzzing, a few).
#[cfg(not(fuzzing))]
const PART_MOVES: usize = 1 << 14;
#[cfg(fuzzing)]
const PART_MOVES: usize = 3;

/// The tables of [`update_many`], kept between batches so that a frame's
/// batch allocates nothing once warm (counted in the structure's memory).
pub(crate) struct Batch<V: Vector> {
    /// Each move's slot, once checked (apart from the boxes: the loops
    /// that read only the slots read 4 bytes a move).
    slots: Vec<u32>,
    /// Each move's box, once checked.
    boxes: Vec<Aabb<V>>,
    /// Per move, the node keeping it, or `NONE` (phase 1; then only the
    /// moves phase 2 writes keep theirs).
    keep: Vec<u32>,
    /// Per slot, a move of it, then [`TWICE`] where several move it.
    by_slot: Table,
    /// The moves left to phase 3, by parts of [`PART_MOVES`] moves.
    rest: Vec<Vec<u32>>,
}

impl<V: Vector> Default for Batch<V> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            boxes: Vec::new(),
            keep: Vec::new(),
            by_slot: Table::default(),
            rest: Vec::new(),
        }
    }
}

impl<V: Vector> Batch<V> {
    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.slots.capacity() * 4
            + self.boxes.capacity() * size_of::<Aabb<V>>()
            + self.keep.capacity() * 4
            + self.by_slot.memory()
            + self.rest.capacity() * size_of::<Vec<u32>>()
            + self.rest.iter().map(|r| r.capacity() * 4).sum::<usize>()
    }
}

/// [`SpatialIndex::update_many`](crate::SpatialIndex::update_many): every
/// move checked first (handle, shape, coordinate limits, the `Reject`
/// policy) and its box computed, on rayon's threads with the feature; then
/// the moves applied: in order, or for a large batch with the feature, in
/// the phases of [`apply_in_phases`]. The tables live in the structure
/// between batches ([`Batch`]).
///
/// # Errors
/// The first bad move's error; nothing is changed then.
pub(crate) fn update_many<V: Vector, T: Send + Sync, S: Family<V, T> + Send + Sync>(
    s: &mut S,
    moves: &[(Handle, Shape<V>)],
) -> Result<(), Error> {
    // A batch that takes the threads enters rayon's pool once, for all
    // its passes (see `in_pool`).
    #[cfg(feature = "rayon")]
    if moves.len() >= PAR_MOVES {
        return super::in_pool(|| update_many_here(s, moves));
    }
    update_many_here(s, moves)
}

/// [`update_many`] on this thread (its passes on rayon's threads with the
/// feature).
fn update_many_here<V: Vector, T: Send + Sync, S: Family<V, T> + Sync>(
    s: &mut S,
    moves: &[(Handle, Shape<V>)],
) -> Result<(), Error> {
    let mut batch = core::mem::take(&mut s.core_mut().batch);
    let r = check_and_apply(s, moves, &mut batch);
    s.core_mut().batch = batch;
    r
}

/// [`update_many`] with its tables.
fn check_and_apply<V: Vector, T: Send + Sync, S: Family<V, T> + Sync>(
    s: &mut S,
    moves: &[(Handle, Shape<V>)],
    batch: &mut Batch<V>,
) -> Result<(), Error> {
    let phased = moves.len() >= PHASED_MOVES && moves.len() < TWICE as usize;
    // Whether `batch.keep` holds phase 1 of `apply_in_phases` (made with
    // the checks, which read the same slot of the store).
    let mut kept = false;
    {
        let s = &*s;
        let check = |(h, shape): &(Handle, Shape<V>)| -> Result<(u32, Aabb<V>), Error> {
            let slot = s.core().store.resolve(*h)?;
            let aabb = crate::index::checked_aabb(shape)?;
            s.check_move(&aabb)?;
            Ok((slot, aabb))
        };
        if moves.len() >= PAR_MOVES {
            // A refused move leaves `NONE`: then the loop below checks the
            // moves again in order and stops at the first refused one, with
            // its error (rayon's collect into a `Result` would give some
            // error, not the first move's: found by fuzzing).
            // (Whether one was refused is noted on the threads: a scan
            // of the results after them was a pass of its own, 3 ns per
            // move at a million.)
            let refused = core::sync::atomic::AtomicBool::new(false);
            let refuse = || {
                refused.store(true, Ordering::Relaxed);
                (NONE, Aabb::empty())
            };
            if phased {
                let n = moves.len();
                // Whether the nodes outgrow the caches (the BSP's leaves
                // of one object, say): then each move's node is asked for
                // early too.
                let many_nodes = s.core().nodes.len() >= PREFETCH_NODES_FROM;
                fill3(
                    moves,
                    overwritable(&mut batch.slots, n, NONE),
                    overwritable(&mut batch.boxes, n, Aabb::empty()),
                    overwritable(&mut batch.keep, n, NONE),
                    |chunk, j| {
                        // Asked early (hints), for the moves a little
                        // later: a slot in the store, then the node its
                        // object is filed in.
                        let core = s.core();
                        if let Some((h, _)) = chunk.get(j + CHECK_AHEAD) {
                            core.prefetch_slot(h.index);
                        }
                        if many_nodes && let Some((h, _)) = chunk.get(j + CHECK_AHEAD / 2) {
                            core.prefetch_node_of(h.index);
                        }
                        let m = &chunk[j];
                        let (slot, aabb) = check(m).unwrap_or_else(|_| refuse());
                        let keep = if slot == NONE {
                            NONE
                        } else {
                            keep_place(s, slot, &aabb)
                        };
                        (slot, aabb, keep)
                    },
                );
                kept = true;
            } else {
                map2_into(moves, &mut batch.slots, &mut batch.boxes, |m| {
                    check(m).unwrap_or_else(|_| refuse())
                });
            }
            if refused.into_inner() {
                batch.slots.clear();
                kept = false;
            }
        } else {
            batch.slots.clear();
        }
        if batch.slots.len() < moves.len() {
            batch.boxes.clear();
            for m in moves {
                let (slot, aabb) = check(m)?;
                batch.slots.push(slot);
                batch.boxes.push(aabb);
            }
        }
    }
    if phased {
        return apply_in_phases(s, moves, batch, kept);
    }
    apply_in_order(s, moves, &batch.slots, &batch.boxes, 0..moves.len())
}

/// How many moves ahead the checks of a large batch ask for a move's slot
/// in the store (and half as many, for its node).
const CHECK_AHEAD: usize = 16;

/// Nodes from which the checks of a large batch prefetch each move's node
/// (measured at a million objects, one thread: the BSP's checks and
/// phase 1, over its 395,071 nodes, 86-94 -> 36-37 ms a batch; the loose
/// octree's, over its 5,803 nodes, which the caches hold, 0.7 ms slower).
const PREFETCH_NODES_FROM: usize = 1 << 15;

/// Phase 1 of [`apply_in_phases`] for one checked move: the node keeping
/// the object of `slot` at its new box `aabb` ([`Family::keeps`]), or
/// `NONE` where the move changes the tree.
#[inline]
fn keep_place<V: Vector, T, S: Family<V, T>>(s: &S, slot: u32, aabb: &Aabb<V>) -> u32 {
    let place = s.core().store.place(slot);
    if place.node != NONE && s.keeps(place.node, aabb) {
        place.node
    } else {
        NONE
    }
}

/// Applies the checked moves `which` (indices into `moves`), in order.
fn apply_in_order<V: Vector, T, S: Family<V, T>>(
    s: &mut S,
    moves: &[(Handle, Shape<V>)],
    slots: &[u32],
    boxes: &[Aabb<V>],
    which: impl Iterator<Item = usize>,
) -> Result<(), Error> {
    for i in which {
        let ((h, shape), slot, aabb) = (moves[i], slots[i], boxes[i]);
        if s.core().store.resolve(h).is_err() {
            // Removed by the `Remove` policy earlier in this batch (the
            // checks passed): it is in the evicted list.
            continue;
        }
        update_checked(
            s,
            Move {
                handle: h,
                slot,
                shape,
                aabb,
            },
        )?;
    }
    Ok(())
}

/// In the slot table of [`apply_in_phases`]: a slot moved more than once.
const TWICE: u32 = NONE - 1;

/// A large batch in three phases (the first two on rayon's threads with
/// the feature; on one thread they still pay, their reads and writes
/// being independent of each other, so that their cache misses overlap):
/// 1. on the threads, which moves only change a box (the object's node
///    keeps it: [`Family::keeps`]); read-only;
/// 2. those moves written on the threads: each thread writes the store's
///    slots of its own range, found through a table by slot (an object
///    moved twice in the batch is left to phase 3, so no two moves write
///    the same place); like `update`'s moves in place, they write no list
///    entry and mark no node, but are recorded ([`super::Moved`]);
/// 3. the other moves (objects that change nodes, leave the world, are
///    queued, or move twice) applied in order on the calling thread.
///
/// No move of phase 2 changes the tree, so each one's node still keeps it
/// when it is written; phase 3 sees the tree as a loop of `update` in the
/// same order would, but with the in-place moves already done. The
/// phases do not depend on the number of threads: the results are the
/// same, in the same order, on any pool.
fn apply_in_phases<V: Vector, T: Send + Sync, S: Family<V, T> + Sync>(
    s: &mut S,
    moves: &[(Handle, Shape<V>)],
    batch: &mut Batch<V>,
    kept: bool,
) -> Result<(), Error> {
    let (slots, boxes) = (&batch.slots, &batch.boxes);
    if !kept {
        let s = &*s;
        map_into_zip(slots, boxes, &mut batch.keep, |&slot, aabb| {
            keep_place(s, slot, aabb)
        });
    }
    let n = moves.len();
    let core = s.core_mut();
    // Which moves phase 2 writes: those whose node keeps them and whose
    // object no other move of the batch moves. The tables are `NONE`
    // throughout between batches. Every pass runs on the threads, and
    // none depends on their number: each writes places of its own, or
    // (a slot moved twice) the same value from every thread.
    let by_slot = &mut batch.by_slot;
    by_slot.grow_to(core.store.capacity());
    let by_slot = &*by_slot;
    // Each moved slot names one of its moves...
    each_index(n, |i| by_slot.set(slots[i] as usize, i as u32));
    // ... then `TWICE` where another move of it did not win.
    each_index(n, |i| {
        let slot = slots[i] as usize;
        if by_slot.get(slot) != i as u32 {
            by_slot.set(slot, TWICE);
        }
    });
    let parts = n.div_ceil(PART_MOVES);
    if batch.rest.len() < parts {
        batch.rest.resize_with(parts, Vec::new);
    }
    let rest = &mut batch.rest[..parts];
    // From here a move keeps its place in `keep` only if phase 2 writes
    // it (an object moved twice is left to phase 3).
    let count = sum_zip_chunks(rest, &mut batch.keep, PART_MOVES, |c, rest, keep| {
        rest.clear();
        let mut count = 0;
        for (j, k) in keep.iter_mut().enumerate() {
            let i = c * PART_MOVES + j;
            if *k != NONE && by_slot.get(slots[i] as usize) == i as u32 {
                count += 1;
            } else {
                *k = NONE;
                rest.push(i as u32);
            }
        }
        count
    });
    let keep = &batch.keep;
    // The moves in place, recorded: their nodes' marks for the query
    // boxes are left to the next reader (see `Moved`).
    core.moved_in_place_many(
        count as usize,
        keep.iter()
            .zip(slots)
            .filter(|&(&k, _)| k != NONE)
            .map(|(_, &slot)| slot),
    );
    // Each table's entries are cleared as they are read, so that the
    // tables are `NONE` throughout between batches.
    let store = core.store.objs_mut();
    let table = &by_slot.0[..store.len()];
    zip_chunks(store, table, GATHER_CHUNK, |store, table| {
        let mut last = NONE;
        for (j, (obj, e)) in store.iter_mut().zip(table).enumerate() {
            // What the move of the slot a few on reads, at random where
            // the moves are not in slot order, asked for early (hints;
            // none where it follows the last one asked for: the
            // processor's own prefetch finds those).
            let ahead = table
                .get(j + GATHER_AHEAD)
                .map(|e| e.load(Ordering::Relaxed));
            if let Some(k) = ahead.filter(|&k| (k as usize) < n) {
                if k != last.wrapping_add(1) {
                    let k = k as usize;
                    prefetch(&keep[k]);
                    prefetch(&moves[k]);
                    prefetch(&boxes[k]);
                }
                last = k;
            }
            let i = e.load(Ordering::Relaxed);
            if i == NONE {
                continue;
            }
            e.store(NONE, Ordering::Relaxed);
            let i = i as usize;
            // `TWICE` is past the moves.
            if i < n && keep[i] != NONE {
                let o = obj.as_mut().expect("a moved slot holds an object");
                o.shape = moves[i].1;
            }
        }
    });
    debug_assert!(
        by_slot.0.iter().all(|e| e.load(Ordering::Relaxed) == NONE),
        "a table entry of the batch was left behind"
    );
    s.note_in_place(count);
    // Phase 3, in order. Its moves lie at random in the store and the
    // lists: each asks early for what a later one reads (a hint).
    let rest = &batch.rest[..parts];
    let mut far = rest.iter().flatten().skip(REST_AHEAD);
    let mut near = rest.iter().flatten().skip(REST_AHEAD / 2);
    for &i in rest.iter().flatten() {
        let core = s.core_mut();
        if let Some(&f) = far.next() {
            core.prefetch_slot(slots[f as usize]);
        }
        if let Some(&m) = near.next() {
            core.prefetch_place(slots[m as usize]);
        }
        apply_in_order(s, moves, slots, boxes, core::iter::once(i as usize))?;
    }
    Ok(())
}

/// How many moves ahead phase 3 of [`apply_in_phases`] asks for a move's
/// slot in the store (and half as many, for its node and list entry).
const REST_AHEAD: usize = 8;
