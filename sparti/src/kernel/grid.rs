//! The pair search every tree family runs first: a hierarchical loose grid
//! over the objects of the kernel's list array, built by a counting sort
//! and between sorts made to follow the objects where they moved, with
//! rows of candidate boxes tested eight at a time.
//!
//! # Why a grid
//! Walking a tree visits nodes that hold one or two objects each, and
//! every visit is a branch the processor guesses at random. Here the
//! objects are sorted into the cells of a few grid levels; the objects of
//! a cell meet the candidates of a handful of rows, each row one
//! contiguous range of boxes stored as separate arrays per coordinate.
//! The cell's rows are copied into one run, and each of its objects tests
//! the run eight boxes at a time, in one loop, without a branch on the
//! outcome.
//!
//! # The grid
//! The cells of level `l` have side `c0 * 2^l` and tile the box around
//! every object, from its lower corner. `c0` is the smallest power of two
//! at least as large as nine in ten of the objects (rounded up so that
//! the finest level has at most four cells per object, and doubled once
//! more where the objects are sparse in those cells: see [`sparse`]), so
//! most objects live at level 0; an object larger than `c0` lives at the
//! first level whose cells are at least its size. Each object goes to the
//! cell of its centre at its level (at a sort: see "Following the
//! objects"). Cells are numbered row by row (x fastest), each level after
//! the one below it, and the objects are sorted by that number:
//! `cell_start[k]..cell_start[k + 1]` are cell `k`'s objects, and a run of
//! cells along x is one range.
//!
//! Positions are measured in cells: `u = (x - origin) * (1 / side)`,
//! rounded to `f32`. That function is monotone, so two boxes that overlap
//! in world coordinates overlap in cell coordinates at every level. Each
//! level records how far, at most, one of its objects sticks out of its
//! cell (`ext`, in cells, with a margin for the rounding of the few
//! operations that follow): an object meets only objects of that level
//! whose cells lie within its box grown by `ext`.
//!
//! # Each pair once
//! An object searches its own level and every coarser level. At its own
//! level it takes only the cells after its own in the numbering, and in
//! its own cell only the objects after it; at coarser levels, every cell
//! its grown box meets. Two objects of one level that overlap each find
//! the other's cell in range, so the one earlier in the order finds the
//! pair; objects of different levels are paired by the finer one.
//!
//! The objects of a few neighbouring cells of one row (a group of
//! [`GROUP`] cells) search together: the rows are those that the box
//! around all of them, grown by `ext`, meets (at their own level, from
//! the group's first object along its row, then the rows after it), a
//! superset of each one's own rows. The boxes in the extra rows never
//! meet the object's box (they lie outside its grown box), and in the
//! group's own row each object tests only the objects after it, so each
//! object finds the same pairs, in the same order, as a search of its
//! own rows would: its own level's first, then the coarser levels'.
//!
//! # Following the objects
//! A frame's moves leave most objects in their cells, so the next build
//! does not sort them again unless it has to: a refit keeps every
//! position's object and cell, takes each object's box now (from the
//! store, in position order, asked for a few positions ahead) and makes
//! each level's `ext` how far its objects stick out of their cells now.
//! An object that left its cell stays filed there, sticking out farther:
//! the search stays exact (it relies only on `ext`), and each such object
//! widens its group's search a little. A build sorts anew instead where
//! the objects are not the ones sorted (an insertion or a removal, or a
//! queued object filed since), where an object sticks out by more than
//! [`DRIFT`] cells beyond the farthest at the sort (a fast object), or
//! where one object in [`MOVERS`] has left its cell (foreseen from how
//! many left each frame, so that a refit that would fail is not tried).
//! Refits and sorts give the same grid on any number of threads.
//!
//! From [`MIRROR_FROM`] objects the grid also keeps a copy of every
//! object's box in position order, one 32-byte record each
//! ([`Grid::mirror`], with each slot's position): a sort fills it, and
//! every move (`update`, one move at a time) writes its new box there.
//! The next refit then reads its boxes in order from the copy instead of
//! the objects' shapes in the store, which lies in slot order, so at
//! random from the grid's point of view; that random read was half of a
//! refit's time at 100k objects. A change the copy is not told of (the
//! phases of a large `update_many` write the shapes directly) leaves it
//! out of date, which the store's count of writes shows: the next refit
//! reads the store, as without a copy, and writes the copy anew. Where
//! three builds in a row found a copy and did not read it (every frame's
//! moves in large batches, or a sort every frame), the copy is dropped,
//! and made again only after a wait that doubles with each drop in a row
//! ([`Grid::build_done`]): it costs memory and a write per move, and pays
//! only where a refit reads it.
//!
//! # When the grid is not used
//! Counting gives, per level, how crowded the cells are. When the
//! expected number of box tests passes [`MAX_TESTS_PER_OBJECT`] per
//! object (a million objects in one spot, or a small cluster in a huge,
//! sparse world, where four cells per object are far too coarse), the
//! search returns `false` and the family walks its tree instead.

// Loops over the axes index several per-axis arrays at once.
#![allow(clippy::needless_range_loop)]

mod lanes;
mod query;

pub(crate) use lanes::Kind;
use lanes::{Boxes, Query};

use crate::geometry::{BATCH, Vector, boxes_of};
use crate::index::{Item, report_found, slot_of, static_of};
use crate::store::{NONE, Store};
use crate::{Counters, Handle, LayerMatrix, Object};

/// How far, in cells, an object may stick out of its cell after a refit
/// beyond the farthest at the last sort: one that drifted farther (a
/// fast object) calls for a new sort, or every object of its level would
/// search that much farther.
const DRIFT: f32 = 0.25;

/// A refit may leave at most one object in `MOVERS` out of the cell of
/// its centre: each widens its group's search. Measured in the `frames`
/// example (loose octree, 100k objects, five rounds), the pair search
/// took 81-95 ns an object with at most one in 8, 81-89 with one in 16,
/// 84-92 with one in 32, 89-94 with one in 64, against 91-96 sorting
/// every frame (an AVX2 machine, BENCHMARKS.md). Measured again on an
/// AVX-512 machine, whose box tests cost less (the kernel's forty-first
/// session, two alternating rounds, pair search ns an object): the loose
/// octree at 10k 72-74 with one in 16, 69-72 with one in 8, 69-74 with
/// one in 6, 73-76 with one in 4, 82-84 with one in 32; at 100k 95-100,
/// 90-94, 89-90, 94-95, 110-112; at 1M 110-111 and 102-104 (one in 16
/// and 8); the octree at 100k 93-97 and 91-93, the loose quadtree 66-68
/// and 60-61.
const MOVERS: u64 = 8;

/// Objects from which the grid keeps its copy of the boxes
/// ([`Grid::mirror`]): below, the store fits the caches, and a refit reads
/// it as fast as the copy, which the moves would write for nothing. From
/// one object in the unit tests and for fuzzing, so that both are checked.
#[cfg(not(any(test, fuzzing)))]
pub(crate) const MIRROR_FROM: usize = 32_768;
#[cfg(any(test, fuzzing))]
pub(crate) const MIRROR_FROM: usize = 1;

/// Builds in a row that begin with the copy of the boxes ([`Grid::mirror`])
/// and do not read it, after which the copy is dropped
/// ([`Grid::build_done`]): three, so that a write the copy was not told
/// of (a large batch of moves, once) and the sort that may follow do not
/// drop it.
const MIRROR_MISSES: u32 = 3;

/// The most builds without a copy of the boxes after it was dropped
/// ([`Grid::build_done`]).
const MIRROR_WAIT_MOST: u32 = 64;

/// How many positions ahead a refit asks for an object's slot in the
/// store.
const FOLLOW_AHEAD: usize = 16;

/// Positions past a row's end that the pair search asks the cache for,
/// as it copies the row: the group after it along the row reads on from
/// there, in each of the few rows a group searches (more streams than the
/// processor follows by itself). Measured with the `frames` example, the
/// loose octree's pair search at 1M took 99-106 ns an object without,
/// 94-98 with the boxes asked for, 90-93 with the slots and flags too (16
/// and 64 positions did no better than 32); at 100k, 87-89 -> 86.
const ROW_AHEAD: usize = 32;

/// Candidates tested together.
const LANES: usize = 8;

/// Objects copied together into a run ([`Run::push`]): the grid's
/// arrays are padded with as many empty boxes.
const COPY: usize = 2 * LANES;

/// Cells of a row whose objects search together (see the module docs):
/// the rows they search are found and copied into a run once for the
/// group, not once for each cell. The groups are fixed (every `GROUP`
/// cells from each row's start), so that a search cut into tasks at
/// group boundaries forms the same groups on any number of threads.
/// Measured with the `frames` example (pair search, ns an object, loose
/// trees, against one cell a group, two alternating rounds): in 3D at
/// 10k 84-86 -> 76-80, at 100k 102-106 -> 93-95; in 2D at 10k 59-60 ->
/// 50-51, at 100k 71 -> 62-63. Two or three cells gave less at 10k, six
/// or eight no more at 10k and less at 100k (BENCHMARKS.md, the
/// seventeenth session). The box tests grow (3D, 10k: 35 -> 69 an
/// object) but the rows found and copied fall by more (1.33 -> 0.42).
const GROUP: usize = 4;

/// Box hits buffered before their exact tests.
const CANDIDATES: usize = 512;

/// Objects from which the pair search asks the cache for what it reads
/// at random or far ahead (the objects of a batch of box hits before
/// their exact tests, so that their cache misses overlap; the rows'
/// continuations; a refit's objects in the store): below, the grid and
/// the store fit the caches, and the hints only cost. From one object in
/// the unit tests, so that they (and Miri) run the hints.
#[cfg(not(test))]
const ASK_FROM: usize = 32_768;
#[cfg(test)]
const ASK_FROM: usize = 1;

/// Objects from which a build's scatter writes positions first, then
/// gathers the objects in position order ([`Piece::scatter`]); from a few
/// in the unit tests and for fuzzing, so that both forms are checked.
#[cfg(not(any(test, fuzzing)))]
const GATHER_FROM: usize = 200_000;
#[cfg(any(test, fuzzing))]
const GATHER_FROM: usize = 128;

/// Positions ahead whose object the gather asks the cache for.
const GATHER_AHEAD: usize = 16;

/// Chunk hits of a cell's objects buffered before their box hits are
/// listed (at least one object's chunks). Smaller under Miri, so that the
/// tests' crowded cell, smaller there, overflows it too.
const HITS: usize = if cfg!(miri) { 16 } else { 256 };

/// The expected box tests per object above which the tree is searched
/// instead.
const MAX_TESTS_PER_OBJECT: f64 = 48.0;

/// Cells per axis, at most: cell coordinates below `2^23` are whole
/// `f32` numbers, which [`floor`] relies on.
const MAX_DIM: f64 = (1 << 22) as f64;

/// `floor(x)` for `0 <= x < 2^23`, without the saturating conversion's
/// checks: adding `2^23` rounds `x` to a whole number, left in the low
/// bits, then one is taken off where that rounded up.
#[inline(always)]
fn floor(x: f32) -> u32 {
    let r = (x + 8_388_608.0).to_bits() & 0x7F_FFFF;
    r - u32::from(r as f32 > x)
}

/// One level of the grid.
#[derive(Clone, Copy, Debug, Default)]
struct Level {
    /// `1 / side`.
    inv: f32,
    /// Cells per axis (1 on the axes a 2D grid does not have).
    dims: [u32; 3],
    /// Number of the level's first cell.
    base: u32,
    /// How far an object of the level sticks out of its cell, at most, in
    /// cells, with the rounding margin.
    ext: f32,
    /// Objects filed at the level.
    count: u32,
    /// How far (before the margin) an object may stick out of its cell
    /// after a refit: as far as at the last sort, plus [`DRIFT`].
    limit: f32,
}

impl Level {
    #[inline]
    fn cells(&self) -> u64 {
        u64::from(self.dims[0]) * u64::from(self.dims[1]) * u64::from(self.dims[2])
    }
}

/// An object's box in the grid's copy kept by the moves ([`Grid::mirror`]):
/// its lower corner in lanes 0 to 2, its upper corner in lanes 3 to 5.
/// Aligned to 32 bytes, so that a move's write touches one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(align(32))]
pub(crate) struct Mirror([f32; 8]);

impl Mirror {
    /// The box's copy.
    #[inline]
    pub fn of<V: Vector>(b: &crate::Aabb<V>) -> Self {
        Self::of_corners(V::DIM, |a| b.min.get(a), |a| b.max.get(a))
    }

    /// The copy of the box whose corners have coordinates `lo(a)` and
    /// `hi(a)` along each of the first `d` axes (as a refit's lanes hold
    /// them).
    #[inline(always)]
    fn of_corners(d: usize, lo: impl Fn(usize) -> f32, hi: impl Fn(usize) -> f32) -> Self {
        let mut m = [0f32; 8];
        for a in 0..d {
            m[a] = lo(a);
            m[3 + a] = hi(a);
        }
        Self(m)
    }
}

/// The grid and the buffers of its search, kept between searches.
#[derive(Default)]
pub(crate) struct Grid {
    /// Objects in the grid.
    n: usize,
    /// The lower corner of the box around every object.
    origin: [f32; 3],
    levels: Vec<Level>,
    /// The levels holding objects, coarsest first.
    used: Vec<u32>,
    /// The boxes in grid order, one array per coordinate, padded with
    /// [`LANES`] empty boxes so that a chunk can always be loaded.
    lo: [Vec<f32>; 3],
    hi: [Vec<f32>; 3],
    /// Store slots in grid order, each with its object's static flag, as
    /// [`Item::tag`] (read with [`slot_of`] and [`static_of`]; as the list
    /// entries keep them: an object's flag
    /// never changes, so a refit leaves them as they are).
    slot: Vec<u32>,
    /// The objects' boxes in grid order, one [`Mirror`] each: filled by a
    /// sort and by a refit that read the store, and kept up to date by
    /// the moves ([`Grid::mirror_move`]), so that the next refit reads
    /// them in order instead of the objects' shapes in the store at
    /// random. Valid while `mirror_at` is the store's count of writes
    /// ([`crate::store::Store::writes`]).
    mirror: Vec<Mirror>,
    /// Each slot's grid position (`NONE`: none), for the moves.
    pos_of: Vec<u32>,
    /// The store's count of writes with which `mirror` agrees (`None`:
    /// none).
    mirror_at: Option<u64>,
    /// Whether a refit of this build read `mirror` ([`Grid::build_done`]).
    mirror_read: bool,
    /// Builds in a row that began with `mirror` and did not read it (a
    /// build that began without one starts the count again).
    mirror_misses: u32,
    /// Builds to go before a refit may make `mirror` again.
    mirror_wait: u32,
    /// Copies dropped in a row, none read since.
    mirror_drops: u32,
    /// Cell numbers of the objects in list order (the sort's input).
    src_key: Vec<u32>,
    /// The positions and cells of the sample that decides the finest
    /// cells' size ([`sparse`]), kept so that a sort allocates nothing
    /// once warm.
    sample_at: Vec<u32>,
    sample_keys: Vec<u32>,
    /// The store's epoch when the objects were last sorted: a refit needs
    /// the same objects.
    epoch: u64,
    /// Refits since the last sort, the objects out of their cells after
    /// the last, and how many more there were each frame at the last
    /// refit tried (to foresee when the next would leave too many).
    refits: u64,
    movers: u64,
    growth: u64,
    /// `cell_start[k]`: the position of cell `k`'s first object; one more
    /// entry for the end.
    cell_start: Vec<u32>,
    /// Whether the last build filled the grid (`false`: too crowded, the
    /// tree is searched instead).
    ok: bool,
    /// [`Grid::reach`], found at the end of each build.
    reach: Option<[[f32; 3]; 2]>,
}

/// A search's buffers: the box hits waiting for their exact test, and the
/// parallel search's tasks (ranges of positions).
#[derive(Default)]
pub(crate) struct Work {
    cand: Vec<[u32; 2]>,
    run: Run,
    /// A cell's chunk hits: object, chunk start in the run, mask.
    hits: Vec<(u32, u32, u32)>,
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    tasks: Vec<(u32, u32)>,
}

impl Work {
    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.cand.capacity() * 8
            + self.tasks.capacity() * 8
            + self.hits.capacity() * 12
            + self.run.memory()
    }
}

/// The values the box arrays `lo` and `hi` hold room for.
fn values_held(lo: &[Vec<f32>; 3], hi: &[Vec<f32>; 3]) -> usize {
    lo.iter().chain(hi).map(Vec::capacity).sum()
}

/// The boxes one cell's objects test: the rows of their search copied
/// one after the other (positions `0..n`), with their grid positions,
/// then [`LANES`] empty boxes, so that eight boxes can be loaded from any
/// position up to `n` (and room for `2 * LANES` positions past `n`, which
/// a chunk hit's second box hit may name before it is dropped).
#[derive(Default)]
struct Run {
    lo: [Vec<f32>; 3],
    hi: [Vec<f32>; 3],
    pos: Vec<u32>,
    n: usize,
}

impl Run {
    fn memory(&self) -> usize {
        (values_held(&self.lo, &self.hi) + self.pos.capacity()) * 4
    }

    #[inline(always)]
    fn clear(&mut self) {
        self.n = 0;
    }

    /// Appends the objects at grid positions `s..e` (first `d` axes).
    #[inline(always)]
    fn push(&mut self, g: &Grid, d: usize, s: usize, e: usize) {
        debug_assert!(s <= e && e <= g.n);
        if g.n >= ASK_FROM {
            // The row's continuation, which the next groups along it read.
            let ahead = (e + ROW_AHEAD).min(g.n);
            for a in 0..d {
                if let (Some(lo), Some(hi)) = (g.lo[a].get(ahead), g.hi[a].get(ahead)) {
                    crate::kernel::prefetch(lo);
                    crate::kernel::prefetch(hi);
                }
            }
            if let Some(slot) = g.slot.get(ahead) {
                crate::kernel::prefetch(slot);
            }
        }
        let len = e - s;
        let at = self.n;
        let need = at + len.next_multiple_of(COPY).max(COPY);
        if self.pos.len() < need {
            self.grow(need);
        }
        // Sixteen objects whatever the length (most rows hold fewer: no
        // branch on it), loaded from the grid's padded arrays: values past
        // the row are overwritten by the next row or by the padding. The
        // rest, if any, in a loop. (`need` holds every block.)
        self.block(g, d, s, at, 0);
        let mut c = COPY;
        while c < len {
            self.block(g, d, s, at, c);
            c += COPY;
        }
        self.n = at + len;
    }

    /// Copies the sixteen objects from grid position `s + c` (the padding
    /// past the objects) to run position `at + c`: one bounds check per
    /// array, where two chunks of eight took two (callgrind of the
    /// `frames` example, the loose octree at 10k on the AVX2 form: the
    /// search 20 instructions an object fewer).
    #[inline(always)]
    fn block(&mut self, g: &Grid, d: usize, s: usize, at: usize, c: usize) {
        let src = (s + c).min(g.n);
        for a in 0..d {
            let l: [f32; COPY] = g.lo[a][src..src + COPY].try_into().expect("padded");
            let h: [f32; COPY] = g.hi[a][src..src + COPY].try_into().expect("padded");
            self.lo[a][at + c..at + c + COPY].copy_from_slice(&l);
            self.hi[a][at + c..at + c + COPY].copy_from_slice(&h);
        }
        let first = (s + c) as u32;
        let iota: [u32; COPY] = core::array::from_fn(|l| first + l as u32);
        self.pos[at + c..at + c + COPY].copy_from_slice(&iota);
    }

    #[cold]
    fn grow(&mut self, need: usize) {
        let len = need.max(2 * self.pos.len()).max(64);
        for v in self.lo.iter_mut().chain(&mut self.hi) {
            v.resize(len, 0.0);
        }
        self.pos.resize(len, 0);
    }

    /// Writes the padding after the objects (first `d` axes; the others
    /// are never read), sixteen empty boxes, which a 16-wide step from
    /// any position up to the end reads ([`Boxes::mask16`]); returns how
    /// many objects the run holds.
    #[inline(always)]
    fn seal(&mut self, d: usize) -> usize {
        let n = self.n;
        if self.pos.len() < n + 2 * LANES {
            self.grow(n + 2 * LANES);
        }
        for a in 0..d {
            self.lo[a][n..n + 2 * LANES].fill(f32::INFINITY);
            self.hi[a][n..n + 2 * LANES].fill(f32::NEG_INFINITY);
        }
        n
    }

    /// The run's boxes as the chunk test reads them (axes `x`, `y` and
    /// `az`, as [`Grid::boxes`]).
    #[inline(always)]
    fn boxes(&self, az: usize) -> Option<Boxes<'_>> {
        let (lo, hi) = (&self.lo, &self.hi);
        Boxes::new(
            [&lo[0], &lo[1], &lo[az]],
            [&hi[0], &hi[1], &hi[az]],
            self.n,
            az + 1,
        )
    }
}

/// Objects from which [`Grid::build_par`] cuts the build into pieces for
/// the threads (built for fuzzing, from a few, so the fuzzer checks it).
#[cfg(all(feature = "rayon", not(fuzzing)))]
const PAR_BUILD: usize = 16_384;
#[cfg(all(feature = "rayon", fuzzing))]
const PAR_BUILD: usize = 64;

/// At most this many pieces per build (and levels per grid), so that
/// the per-piece and per-level tables are arrays, not heap buffers.
const MAX_PARTS: usize = 64;

/// `f` of every part, its results merged (an exact, order-free merge:
/// sums, minima, maxima); on rayon's threads where there are several
/// parts and the feature is on. `None` for no parts. One part allocates
/// nothing.
fn fold_parts<P: Send, R: Send>(
    parts: impl ExactSizeIterator<Item = P>,
    f: impl Fn(P) -> R + Sync + Send,
    merge: impl Fn(R, R) -> R + Sync + Send,
) -> Option<R> {
    #[cfg(feature = "rayon")]
    if parts.len() > 1 {
        use rayon::prelude::*;
        return parts
            .collect::<Vec<P>>()
            .into_par_iter()
            .map(f)
            .reduce_with(merge);
    }
    parts.map(f).reduce(merge)
}

/// Pieces of a build of `items`' objects: one per thread of rayon's from
/// [`PAR_BUILD`] objects where the feature is on, else one.
fn build_parts(objects: usize) -> usize {
    #[cfg(feature = "rayon")]
    if objects >= PAR_BUILD {
        return rayon::current_num_threads().clamp(1, MAX_PARTS);
    }
    let _ = objects;
    1
}

/// `f` of every part: on rayon's threads where there are several parts
/// and the feature is on. One part allocates nothing.
fn for_parts<P: Send>(parts: impl ExactSizeIterator<Item = P>, f: impl Fn(P) + Sync + Send) {
    #[cfg(feature = "rayon")]
    if parts.len() > 1 {
        use rayon::prelude::*;
        parts.collect::<Vec<P>>().into_par_iter().for_each(f);
        return;
    }
    parts.for_each(f);
}

/// `s` cut at the ascending positions `at` (each held to `s`'s length, so
/// an empty array gives empty pieces): `at.len() + 1` pieces.
fn split_at_all<'a, X>(mut s: &'a mut [X], at: &[usize]) -> impl Iterator<Item = &'a mut [X]> {
    let mut done = 0;
    let mut cuts = at.iter().map(Some).chain(core::iter::once(None));
    core::iter::from_fn(move || {
        let cut = cuts.next()?;
        let rest = core::mem::take(&mut s);
        Some(match cut {
            Some(&p) => {
                let p = p.max(done).min(done + rest.len());
                let (a, b) = rest.split_at_mut(p - done);
                s = b;
                done = p;
                a
            }
            None => rest,
        })
    })
}

/// The first pass of a build over some objects: the box around them,
/// their number and their sizes by binary exponent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Survey {
    lo: [f32; 3],
    hi: [f32; 3],
    by_exp: [u32; 256],
    n: usize,
}

impl Survey {
    const EMPTY: Self = Self {
        lo: [f32::INFINITY; 3],
        hi: [f32::NEG_INFINITY; 3],
        by_exp: [0; 256],
        n: 0,
    };

    /// The survey of `n` objects whose boxes span `span`, with
    /// `by_exp[e]` of them whose largest side has exponent byte `e`.
    pub fn new<V: Vector>(span: crate::Aabb<V>, by_exp: [u32; 256], n: usize) -> Self {
        let mut s = Self::EMPTY;
        for a in 0..V::DIM {
            s.lo[a] = span.min.get(a);
            s.hi[a] = span.max.get(a);
        }
        s.by_exp = by_exp;
        s.n = n;
        s
    }

    /// The survey of the objects at positions `range` of `src`.
    pub fn of<V: Vector, S: Source<V> + ?Sized>(src: &S, range: core::ops::Range<usize>) -> Self {
        let mut lo = V::splat(f32::INFINITY);
        let mut hi = V::splat(f32::NEG_INFINITY);
        let mut by_exp = [0u32; 256];
        let mut n = 0usize;
        let ahead = src.len() >= ASK_FROM;
        for i in range {
            if ahead {
                src.ahead(i + SOURCE_AHEAD);
            }
            let Some(it) = src.at(i) else {
                continue;
            };
            n += 1;
            lo = lo.min(it.aabb.min);
            hi = hi.max(it.aabb.max);
            let size = (it.aabb.max - it.aabb.min).max_element();
            by_exp[(size.to_bits() >> 23) as usize & 0xFF] += 1;
        }
        Self::new(crate::Aabb { min: lo, max: hi }, by_exp, n)
    }

    fn merged(mut self, o: Self) -> Self {
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(o.lo[a]);
            self.hi[a] = self.hi[a].max(o.hi[a]);
        }
        for (m, v) in self.by_exp.iter_mut().zip(o.by_exp) {
            *m += v;
        }
        self.n += o.n;
        self
    }
}

/// Where a new sort of the grid reads its objects: positions `0..len()`,
/// each an object (its box, slot and static flag, as an [`Item`]) or
/// nothing. The kernel's sources are its list entries in order, with
/// their boxes from the store ([`crate::kernel::Filed`]) or copied once
/// by the build step.
pub(crate) trait Source<V: Vector>: Sync {
    /// Positions.
    fn len(&self) -> usize;
    /// The object at position `i` (below `len()`), if there is one.
    fn at(&self, i: usize) -> Option<Item<V>>;
    /// Asks for position `i` ahead of its read (a hint; nothing past
    /// the end).
    fn prefetch(&self, i: usize);
    /// [`Source::prefetch`] for a pass in order, from [`ASK_FROM`]
    /// positions: a source read in order from memory in order needs no
    /// hint (the processor sees the stream), one whose positions lie at
    /// random asks.
    #[inline]
    fn ahead(&self, i: usize) {
        let _ = i;
    }
}

/// A slice of objects with their boxes as a source (room skipped).
impl<V: Vector> Source<V> for [Item<V>] {
    #[inline]
    fn len(&self) -> usize {
        <[Item<V>]>::len(self)
    }
    #[inline]
    fn at(&self, i: usize) -> Option<Item<V>> {
        let it = self[i];
        (!it.is_room()).then_some(it)
    }
    #[inline]
    fn prefetch(&self, i: usize) {
        if let Some(it) = self.get(i) {
            crate::kernel::prefetch(it);
        }
    }
}

/// How many positions ahead a pass over a [`Source`] asks for an object
/// (from [`ASK_FROM`] objects: the kernel's list entries name slots of
/// the store at random).
const SOURCE_AHEAD: usize = 16;

/// The cuts of `0..n` into pieces of `chunk` positions.
fn ranges(n: usize, chunk: usize) -> impl ExactSizeIterator<Item = core::ops::Range<usize>> {
    let chunk = chunk.max(1);
    (0..n.div_ceil(chunk)).map(move |i| i * chunk..((i + 1) * chunk).min(n))
}

/// Positions drawn for the sample that decides whether a grid's finest
/// cells are too small for its objects ([`sparse`]).
const SAMPLE: usize = 1 << 14;

/// Whether the finest level of `keyer`'s grid is sparse: an object of
/// that level shares its cell with fewer than `4 / 2^D` others on average
/// (cells twice as large would hold fewer than four others, less the few
/// objects of the next level up that they would take in too).
///
/// Estimated from a sample of the positions of `items` (all of them
/// where there are no more than [`SAMPLE`]): `SAMPLE` positions drawn at
/// random, the same every time (a fixed xorshift), the repeats dropped:
/// a uniform sample of `s` of the `len` positions. Not evenly spaced: the
/// list is in the tree's order, where the objects of one cell lie
/// together, and evenly spaced positions would find too few of them
/// together. Each pair of sampled objects in one cell then stands for
/// `(len / s)^2` pairs of objects, so an object of the level (of which
/// `s0` were sampled) meets `pairs * len / (s * s0)` others in its cell.
/// `keys` and `at` are the grid's buffers (their contents are lost). The
/// same sample on any number of threads: the decision is deterministic.
///
/// Measured on the `build` example's boxes (sides 0.5 to 1.5) spread
/// further apart (its `SPREAD`), with a temporary build forcing either
/// grid (BENCHMARKS.md, thirty-fourth session): at 200k objects in 3D,
/// the pair search with the larger cells took 28 -> 12, 30 -> 12 and
/// 27 -> 18 ms at 0.19, 0.30 and 0.45 others, the same at 0.38 and 0.62;
/// in 2D less at every density tried.
fn sparse<V: Vector, S: Source<V> + ?Sized>(
    items: &S,
    keyer: &Keyer<'_>,
    keys: &mut Vec<u32>,
    at: &mut Vec<u32>,
) -> bool {
    let len = items.len();
    at.clear();
    if len <= SAMPLE {
        at.extend(0..len as u32);
    } else {
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        at.extend((0..SAMPLE).map(|_| {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            (r % len as u64) as u32
        }));
        at.sort_unstable();
        at.dedup();
    }
    let first = keyer.levels[0].cells();
    keys.clear();
    keys.extend(at.iter().filter_map(|&i| {
        let mut k = [NONE];
        let i = i as usize;
        keyer.keys(items, i..i + 1, &mut k, |_| {});
        Some(k[0]).filter(|&k| u64::from(k) < first)
    }));
    keys.sort_unstable();
    let pairs: u64 = keys
        .chunk_by(|a, b| a == b)
        .map(|run| (run.len() as u64) * (run.len() as u64 - 1))
        .sum();
    let (s, s0) = (at.len() as u128, keys.len() as u128);
    (u128::from(pairs) * len as u128) << V::DIM < 4 * s * s0
}

/// The cell of an object: its level (the first whose cells are at least
/// its size) and the cell of its centre there.
struct Keyer<'a> {
    levels: &'a [Level],
    origin: [f32; 3],
    /// `1 / c0`.
    inv0: f32,
}

impl<'a> Keyer<'a> {
    /// The formula over `levels` (`1 / c0` is the finest level's `inv`:
    /// the same rounding of the same quotient).
    fn over(levels: &'a [Level], origin: [f32; 3]) -> Self {
        Keyer {
            levels,
            origin,
            inv0: levels.first().map_or(1.0, |l| l.inv),
        }
    }

    /// The keys of the objects at positions `range` of `src` into `keys`
    /// (`NONE` where there is none: every entry is written), each
    /// object's also to `each` (a count by cell, in a build on one
    /// thread: one pass fewer); per level, how far its objects stick out
    /// of their cells and how many there are.
    fn keys<V: Vector, S: Source<V> + ?Sized>(
        &self,
        src: &S,
        range: core::ops::Range<usize>,
        keys: &mut [u32],
        mut each: impl FnMut(u32),
    ) -> LevelStats {
        let d = V::DIM;
        let top = self.levels.len() - 1;
        let mut stats = NO_STATS;
        let ahead = src.len() >= ASK_FROM;
        for (i, slot_key) in range.zip(keys) {
            if ahead {
                src.ahead(i + SOURCE_AHEAD);
            }
            let Some(it) = src.at(i) else {
                *slot_key = NONE;
                continue;
            };
            let size = (it.aabb.max - it.aabb.min).max_element() * self.inv0;
            // The first level whose cells are at least the object's size.
            let mut l = if size <= 1.0 {
                0
            } else {
                let e = ((size.to_bits() >> 23) as i32 - 127) as usize;
                e + usize::from(size > f32::from_bits(((e as u32) + 127) << 23))
            };
            l = l.min(top);
            let lv = &self.levels[l];
            let mut key = 0u64;
            let mut stride = 1u64;
            let mut out = f32::NEG_INFINITY;
            // Over the three lanes with a break, not `0..d`: the compiler
            // then unrolls it (cachegrind: 27.5M against 50.3M
            // instructions for this pass, 1k objects, 200 frames).
            for a in 0..3 {
                if a >= d {
                    break;
                }
                let u0 = (it.aabb.min.get(a) - self.origin[a]) * lv.inv;
                let u1 = (it.aabb.max.get(a) - self.origin[a]) * lv.inv;
                let k = floor(((u0 + u1) * 0.5).max(0.0).min((lv.dims[a] - 1) as f32));
                let kf = k as f32;
                out = out.max(kf - u0).max(u1 - (kf + 1.0));
                key += u64::from(k) * stride;
                stride *= u64::from(lv.dims[a]);
            }
            let st = &mut stats[l];
            st.0 = st.0.max(out);
            st.1 += 1;
            let k = (u64::from(lv.base) + key) as u32;
            *slot_key = k;
            each(k);
        }
        stats
    }
}

/// Per level, how far its objects stick out of their cells and how many
/// there are.
type LevelStats = [(f32, u32); MAX_PARTS];

/// No object at any level.
const NO_STATS: LevelStats = [(f32::NEG_INFINITY, 0); MAX_PARTS];

/// The statistics of two sets of objects together.
fn merged_stats(mut a: LevelStats, b: LevelStats) -> LevelStats {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (x.0.max(y.0), x.1 + y.1);
    }
    a
}

/// A piece's part of the grid's box arrays and of its copy of the
/// boxes ([`Grid::mirror`]), for a sort's scatter or a refit to write.
struct PieceBoxes<'a> {
    lo: [&'a mut [f32]; 3],
    hi: [&'a mut [f32]; 3],
    mirror: &'a mut [Mirror],
}

/// The grid's box arrays and copy of the boxes cut at positions `at`,
/// one [`PieceBoxes`] a piece (past the copy's end where it has none:
/// then empty).
fn split_boxes<'a>(
    lo: &'a mut [Vec<f32>; 3],
    hi: &'a mut [Vec<f32>; 3],
    mirror: &'a mut [Mirror],
    at: &[usize],
) -> impl Iterator<Item = PieceBoxes<'a>> {
    let mut lo = lo.each_mut().map(|v| split_at_all(v, at));
    let mut hi = hi.each_mut().map(|v| split_at_all(v, at));
    let mut mirror = split_at_all(mirror, at);
    // Every array is cut at the same positions: as many pieces each.
    core::iter::from_fn(move || {
        let mirror = mirror.next()?;
        let piece = "a piece per part";
        Some(PieceBoxes {
            lo: core::array::from_fn(|a| lo[a].next().expect(piece)),
            hi: core::array::from_fn(|a| hi[a].next().expect(piece)),
            mirror,
        })
    })
}

/// A range of cells of a build's scatter, with the positions they take
/// in the grid's arrays.
struct Piece<'a> {
    first_cell: u32,
    first_pos: u32,
    /// The range's `cell_start` entries (each cell's end, counted down to
    /// its start).
    cell_end: &'a mut [u32],
    boxes: PieceBoxes<'a>,
    slot: &'a mut [u32],
}

impl Piece<'_> {
    /// Writes the objects of the piece's cells at their positions, every
    /// object read in the same (backward) order.
    ///
    /// With `gather` (from [`GATHER_FROM`] objects), in two passes: the
    /// scatter writes only each position's object index (in `slot`), then
    /// a pass in position order reads each object and writes its box and
    /// slot (with its flag). Random writes to every array (seven in 3D; eight
    /// when this was measured, with a separate array of flags) become random
    /// writes to one and independent reads, whose misses overlap (measured
    /// at a million objects: the scatter 27 -> 16 ms in a fresh 3D build;
    /// below a hundred thousand, where the arrays stay in the cache, the
    /// frame was 3-6% slower).
    fn scatter<V: Vector, S: Source<V> + ?Sized>(&mut self, src: &S, keys: &[u32], gather: bool) {
        if !gather {
            for (i, &k) in keys.iter().enumerate().rev() {
                if let Some(p) = self.claim(k)
                    && let Some(it) = src.at(i)
                {
                    self.put(p, &it);
                }
            }
            return;
        }
        for (i, &k) in keys.iter().enumerate().rev() {
            // The cell's end is a random read (cells outnumber objects):
            // asked for ahead (measured at a million objects: 16 -> 14 ms).
            if let Some(&ahead) = keys.get(i.wrapping_sub(2 * GATHER_AHEAD))
                && let Some(e) = self
                    .cell_end
                    .get(ahead.wrapping_sub(self.first_cell) as usize)
            {
                crate::kernel::prefetch(e);
            }
            if let Some(p) = self.claim(k) {
                self.slot[p] = i as u32;
            }
        }
        for p in 0..self.slot.len() {
            if let Some(&q) = self.slot.get(p + GATHER_AHEAD) {
                src.prefetch(q as usize);
            }
            if let Some(it) = src.at(self.slot[p] as usize) {
                self.put(p, &it);
            }
        }
    }

    /// The next position (counted down from its end) of cell `k`, if the
    /// cell is one of the piece's.
    #[inline(always)]
    fn claim(&mut self, k: u32) -> Option<usize> {
        let end = self
            .cell_end
            .get_mut(k.wrapping_sub(self.first_cell) as usize)?;
        *end -= 1;
        Some((*end - self.first_pos) as usize)
    }

    /// Writes object `it` (its box, slot and flag) at position `p`.
    #[inline(always)]
    fn put<V: Vector>(&mut self, p: usize, it: &Item<V>) {
        let b = &mut self.boxes;
        for a in 0..V::DIM {
            b.lo[a][p] = it.aabb.min.get(a);
            b.hi[a][p] = it.aabb.max.get(a);
        }
        if let Some(m) = b.mirror.get_mut(p) {
            *m = Mirror::of(&it.aabb);
        }
        self.slot[p] = it.tag();
    }
}

/// What a build needs to follow the objects instead of sorting them
/// anew ([`Grid::refit`]): which objects there are (the store's epoch,
/// which every insertion and removal changes, and the number filed in
/// the tree, which the filing of queued objects changes), each object's
/// shape now by its slot (`None` where it is not filed), and a hint to
/// ask for a slot ahead.
pub(crate) struct Follow<L, P> {
    pub epoch: u64,
    pub filed: usize,
    /// The store's count of writes ([`Grid::mirror`]).
    pub writes: u64,
    /// Whether every live object is filed (none queued).
    pub all_filed: bool,
    pub locate: L,
    pub prefetch: P,
}

/// What every piece of a refit reads: the grid's levels, cells and
/// slots.
#[derive(Clone, Copy)]
struct FollowCtx<'a> {
    /// Whether the boxes come from the grid's copy ([`Grid::mirror`]),
    /// not from the store.
    mirrored: bool,
    levels: &'a [Level],
    used: &'a [u32],
    origin: [f32; 3],
    cell_start: &'a [u32],
    slot: &'a [u32],
}

/// An object's shape now by its slot, `None` where it is not filed.
pub(crate) trait Locate<V: Vector>: Fn(u32) -> Option<crate::Shape<V>> {}
impl<V: Vector, L: Fn(u32) -> Option<crate::Shape<V>>> Locate<V> for L {}

/// A piece of a refit: the positions `first..end` and their boxes.
struct FollowPiece<'a> {
    first: usize,
    end: usize,
    /// Its boxes; its part of [`Grid::mirror`] is read where the context
    /// says it is up to date, else written.
    boxes: PieceBoxes<'a>,
}

impl FollowPiece<'_> {
    /// The piece's objects' boxes now, and per level how far
    /// they stick out of their cells and how many left their cells;
    /// `None` where one is not filed or sticks out past its level's
    /// limit. Compiled for AVX2 where the processor has it
    /// ([`FollowPiece::follow_avx2`]).
    fn follow<V: Vector, L: Locate<V>, P: Fn(u32)>(
        &mut self,
        follow: &Follow<L, P>,
        ctx: &FollowCtx<'_>,
    ) -> Option<LevelStats> {
        #[cfg(target_arch = "x86_64")]
        if Kind::best().is_wide() {
            // SAFETY: `best` found AVX2 on this processor.
            return unsafe { self.follow_avx2(follow, ctx) };
        }
        self.follow_in(follow, ctx)
    }

    /// [`FollowPiece::follow`] compiled for AVX2 as a whole: its loops
    /// over a batch's eight lanes run on 8-wide registers.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn follow_avx2<V: Vector, L: Locate<V>, P: Fn(u32)>(
        &mut self,
        follow: &Follow<L, P>,
        ctx: &FollowCtx<'_>,
    ) -> Option<LevelStats> {
        self.follow_in(follow, ctx)
    }

    /// [`FollowPiece::follow`], whatever the processor.
    #[inline(always)]
    fn follow_in<V: Vector, L: Locate<V>, P: Fn(u32)>(
        &mut self,
        follow: &Follow<L, P>,
        ctx: &FollowCtx<'_>,
    ) -> Option<LevelStats> {
        let FollowCtx {
            mirrored,
            levels,
            used,
            origin,
            cell_start,
            slot,
        } = *ctx;
        let d = V::DIM;
        let mut stats = NO_STATS;
        let (first, end) = (self.first, self.end);
        // Where the store fits the caches, the hints only cost.
        let ask = slot.len() >= ASK_FROM;
        for &l in used {
            let lv = &levels[l as usize];
            // The level's positions within the piece.
            let ls = cell_start[lv.base as usize] as usize;
            let (s, e) = (ls.max(first), (ls + lv.count as usize).min(end));
            let mut out = f32::NEG_INFINITY;
            let mut movers = 0u32;
            let lim = lv.limit;
            // A batch of positions at a time: the boxes, the cells of the
            // centres and how far each box sticks out are computed lane
            // by lane, in SIMD registers (the same operations, so the same
            // results, as one object at a time).
            let mut p0 = s;
            while p0 < e {
                let k = BATCH.min(e - p0);
                let q = p0 - first;
                let (mut lo, mut hi) = ([[0f32; BATCH]; 3], [[0f32; BATCH]; 3]);
                if mirrored {
                    // The boxes the moves left in the copy, in order. The
                    // lanes past the batch repeat its first object.
                    for j in 0..BATCH {
                        let m = &self.boxes.mirror[q + if j < k { j } else { 0 }].0;
                        for a in 0..3 {
                            lo[a][j] = m[a];
                            hi[a][j] = m[3 + a];
                        }
                    }
                } else {
                    // The objects as they are now, from the store (asked
                    // for ahead: it is in slot order, the grid in space's).
                    let mut shapes = [crate::Shape::Box(crate::Aabb::<V>::empty()); BATCH];
                    for j in 0..k {
                        let p = p0 + j;
                        if ask && let Some(&ahead) = slot.get(p + FOLLOW_AHEAD) {
                            (follow.prefetch)(slot_of(ahead));
                        }
                        shapes[j] = (follow.locate)(slot_of(slot[p]))?;
                    }
                    for j in k..BATCH {
                        shapes[j] = shapes[0];
                    }
                    boxes_of(&shapes, &mut lo, &mut hi);
                }
                // The cell of each centre, as the sort computes it.
                let (mut u0, mut u1) = ([[0f32; BATCH]; 3], [[0f32; BATCH]; 3]);
                let mut kc = [[0u32; BATCH]; 3];
                for a in 0..d {
                    let top = (lv.dims[a] - 1) as f32;
                    for j in 0..BATCH {
                        u0[a][j] = (lo[a][j] - origin[a]) * lv.inv;
                        u1[a][j] = (hi[a][j] - origin[a]) * lv.inv;
                        kc[a][j] = floor(((u0[a][j] + u1[a][j]) * 0.5).max(0.0).min(top));
                    }
                }
                // Where an object left the cell of its position, that
                // cell's coordinates instead.
                for j in 0..k {
                    let p = p0 + j;
                    let mut key = u64::from(lv.base);
                    let mut stride = 1u64;
                    for a in 0..d {
                        key += u64::from(kc[a][j]) * stride;
                        stride *= u64::from(lv.dims[a]);
                    }
                    let key = key as usize;
                    let home = cell_start
                        .get(key..key + 2)
                        .is_some_and(|r| r[0] as usize <= p && p < r[1] as usize);
                    if !home {
                        movers += 1;
                        let own = coords(lv, cell_start.partition_point(|&x| x as usize <= p) - 1);
                        for a in 0..d {
                            kc[a][j] = own[a];
                        }
                    }
                }
                for j in k..BATCH {
                    for a in 0..d {
                        kc[a][j] = kc[a][0];
                    }
                }
                // How far each sticks out of its cell.
                let mut o = [f32::NEG_INFINITY; BATCH];
                for a in 0..d {
                    for j in 0..BATCH {
                        let kf = kc[a][j] as f32;
                        o[j] = o[j].max(kf - u0[a][j]).max(u1[a][j] - (kf + 1.0));
                    }
                }
                let mut far = false;
                for j in 0..BATCH {
                    // (NaN never: the boxes are checked.)
                    far |= o[j] > lim || o[j].is_nan();
                    out = out.max(o[j]);
                }
                if far {
                    return None;
                }
                for a in 0..d {
                    self.boxes.lo[a][q..q + k].copy_from_slice(&lo[a][..k]);
                    self.boxes.hi[a][q..q + k].copy_from_slice(&hi[a][..k]);
                }
                if !mirrored && !self.boxes.mirror.is_empty() {
                    for j in 0..k {
                        self.boxes.mirror[q + j] =
                            Mirror::of_corners(d, |a| lo[a][j], |a| hi[a][j]);
                    }
                }
                p0 += k;
            }
            stats[l as usize] = (out, movers);
        }
        Some(stats)
    }
}

impl Grid {
    /// Bytes held.
    pub fn memory(&self) -> usize {
        (values_held(&self.lo, &self.hi)
            + self.slot.capacity()
            + self.src_key.capacity()
            + self.sample_at.capacity()
            + self.sample_keys.capacity()
            + self.cell_start.capacity())
            * 4
            + self.levels.capacity() * size_of::<Level>()
            + self.used.capacity() * 4
            + self.mirror.capacity() * size_of::<Mirror>()
            + self.pos_of.capacity() * 4
    }

    /// The cell whose objects' range holds position `p` (below the
    /// number of objects): the last cell starting at or before `p` (the
    /// empty cells before it start there too, and end there).
    #[inline]
    fn cell_at(&self, p: usize) -> usize {
        self.cell_start.partition_point(|&s| s as usize <= p) - 1
    }

    /// The group of cells (see [`GROUP`]) that holds cell `c`: its first
    /// cell and the cell after its last.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    fn group_of(&self, c: usize) -> (usize, usize) {
        let Some(lv) = self
            .levels
            .iter()
            .find(|l| (c as u64) < u64::from(l.base) + l.cells())
        else {
            // Past the last level: the end cell, a group of its own.
            return (c, c + 1);
        };
        let x = (c - lv.base as usize) % lv.dims[0] as usize;
        let x0 = x / GROUP * GROUP;
        (c - (x - x0), c - x + group_end(x as u32, lv.dims[0]))
    }

    /// Objects in the grid.
    pub fn len(&self) -> usize {
        self.n
    }

    /// A box that holds every object's box, found without a pass over
    /// the objects: each level's cells grown by how far its objects stick
    /// out of them (a refit keeps that up to date), and a little more.
    /// Each bound is checked with the cell coordinates the grid itself
    /// computes (`(x - origin) * inv`, monotone in `x`): an object of the
    /// level lies within `-ext..dims + ext` cells, so within a bound whose
    /// cell coordinate is beyond that. `None` for an empty grid, or where
    /// no finite bound passes the check.
    #[inline]
    pub fn reach<V: Vector>(&self) -> Option<crate::Aabb<V>> {
        let [lo, hi] = self.reach?;
        let (mut min, mut max) = (V::ZERO, V::ZERO);
        for a in 0..V::DIM {
            (min, max) = (min.with(a, lo[a]), max.with(a, hi[a]));
        }
        Some(crate::Aabb { min, max })
    }

    /// [`Grid::reach`], computed (at the end of a build).
    fn find_reach<V: Vector>(&self) -> Option<[[f32; 3]; 2]> {
        if !self.ok {
            return None;
        }
        let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &l in &self.used {
            let lv = &self.levels[l as usize];
            let ext = lv.ext.max(0.0);
            let side = 1.0 / f64::from(lv.inv);
            for a in 0..V::DIM {
                let (o, top) = (self.origin[a], lv.dims[a] as f32 + ext);
                let cell = |x: f32| (x - o) * lv.inv;
                // A sixteenth of a cell beyond, doubled until it passes.
                let (mut lo, mut hi) = (None, None);
                let mut margin = 1.0 / 16.0;
                for _ in 0..24 {
                    let out = (f64::from(ext) + margin) * side;
                    let l = (f64::from(o) - out) as f32;
                    let h = (f64::from(o) + f64::from(lv.dims[a]) * side + out) as f32;
                    if lo.is_none() && l.is_finite() && cell(l) < -ext {
                        lo = Some(l);
                    }
                    if hi.is_none() && h.is_finite() && cell(h) > top {
                        hi = Some(h);
                    }
                    if lo.is_some() && hi.is_some() {
                        break;
                    }
                    margin *= 2.0;
                }
                min[a] = min[a].min(lo?);
                max[a] = max[a].max(hi?);
            }
        }
        (min[0] <= max[0]).then_some([min, max])
    }

    /// Whether the last build filled the grid (`false` where it would
    /// have been too crowded, and before the first build).
    #[inline]
    pub fn is_built(&self) -> bool {
        self.ok
    }

    /// Sorts the objects of `items` (entries of room, [`Item::is_room`],
    /// skipped) into the grid, on this thread, or follows them where
    /// they moved since the last sort (a refit, which reads the
    /// objects through `follow` and does not call `items`). Leaves it
    /// unbuilt (see [`Grid::is_built`]) when it would be too crowded to
    /// pay (module docs): the caller searches its tree.
    pub fn build<'i, V: Vector, S: Source<V> + ?Sized + 'i, L: Locate<V>, P: Fn(u32)>(
        &mut self,
        items: impl FnOnce() -> &'i S,
        follow: &Follow<L, P>,
    ) {
        let had = self.build_start();
        self.ok = self.refit(follow) || self.sort(items(), 1, follow, None);
        self.build_done::<V>(had);
    }

    /// [`Grid::build`], its sort on rayon's threads where the feature is
    /// on (from `PAR_BUILD` objects): the same grid, position for
    /// position, on any number of threads. (Its refit runs on this
    /// thread: the objects' type need not be shared across threads. The
    /// parallel pair search refits on the threads: [`Grid::build_shared`].)
    /// The build step (`flush`) builds with it.
    /// `survey`, where given, must be [`Survey::of`] the entries: a new
    /// sort then skips that pass.
    pub fn build_par<'i, V: Vector, S: Source<V> + ?Sized + 'i, L: Locate<V>, P: Fn(u32)>(
        &mut self,
        items: impl FnOnce() -> &'i S,
        follow: &Follow<L, P>,
        survey: Option<Survey>,
    ) {
        let had = self.build_start();
        self.ok = self.refit(follow) || {
            let items = items();
            self.sort(items, build_parts(items.len()), follow, survey)
        };
        self.build_done::<V>(had);
    }

    /// [`Grid::build_par`], its refit on rayon's threads too (the
    /// parallel pair search, whose objects may be shared).
    #[cfg(feature = "rayon")]
    pub fn build_shared<
        'i,
        V: Vector,
        S: Source<V> + ?Sized + 'i,
        L: Locate<V> + Sync,
        P: Fn(u32) + Sync,
    >(
        &mut self,
        items: impl FnOnce() -> &'i S,
        follow: &Follow<L, P>,
    ) {
        let parts = build_parts(follow.filed);
        let had = self.build_start();
        self.ok = self.refit_par(follow, parts) || self.sort(items(), parts, follow, None);
        self.build_done::<V>(had);
    }

    /// The start of a build: whether the grid has a copy of the boxes
    /// ([`Grid::mirror`]) now, for [`Grid::build_done`].
    #[inline]
    fn build_start(&mut self) -> bool {
        self.mirror_read = false;
        !self.mirror.is_empty()
    }

    /// The end of a build that began with a copy of the boxes where
    /// `had`: the grid's reach, and the copy dropped where it costs
    /// without paying. The copy pays only where a refit reads it, so
    /// where [`MIRROR_MISSES`] builds in a row began with a copy and no
    /// refit read it (the objects moved by large batches, whose phases
    /// write the shapes directly, or sorted anew every frame), it is
    /// dropped, its memory freed, and none is made for the next builds:
    /// 1, 2, 4 and so on up to [`MIRROR_WAIT_MOST`] after each drop in a
    /// row, until a refit reads the copy again.
    fn build_done<V: Vector>(&mut self, had: bool) {
        self.reach = self.find_reach::<V>();
        if self.mirror_read {
            self.mirror_misses = 0;
            self.mirror_drops = 0;
        } else if !had {
            self.mirror_misses = 0;
            self.mirror_wait = self.mirror_wait.saturating_sub(1);
        } else {
            self.mirror_misses += 1;
            if self.mirror_misses >= MIRROR_MISSES {
                self.mirror = Vec::new();
                self.pos_of = Vec::new();
                self.mirror_at = None;
                self.mirror_misses = 0;
                self.mirror_wait = (1u32 << self.mirror_drops).min(MIRROR_WAIT_MOST);
                self.mirror_drops = (self.mirror_drops + 1).min(31);
            }
        }
    }

    /// A new sort of the objects ([`Grid::fill`]), which `follow`'s
    /// epoch then names.
    fn sort<V: Vector, S: Source<V> + ?Sized, L, P>(
        &mut self,
        items: &S,
        parts: usize,
        follow: &Follow<L, P>,
        survey: Option<Survey>,
    ) -> bool {
        self.epoch = follow.epoch;
        self.refits = 0;
        self.movers = 0;
        let ok = self.fill(items, parts, survey);
        self.mirror_at = None;
        if ok && self.n > 0 && self.mirror.len() == self.n {
            self.find_positions();
            self.mirror_at = Some(follow.writes);
        }
        ok
    }

    /// Each slot's grid position (`pos_of`), for the moves' writes into
    /// the copy of the boxes.
    fn find_positions(&mut self) {
        let slots = &self.slot[..self.n];
        let len = slots.iter().map(|&t| slot_of(t) as usize + 1).max();
        self.pos_of.clear();
        self.pos_of.resize(len.unwrap_or(0), NONE);
        for (p, &t) in slots.iter().enumerate() {
            self.pos_of[slot_of(t) as usize] = p as u32;
        }
    }

    /// Before a refit that reads the store: the copy of the boxes made
    /// where it has none yet (from [`MIRROR_FROM`] objects), for the
    /// refit to fill.
    fn make_mirror(&mut self) {
        if self.n >= MIRROR_FROM && self.mirror.len() != self.n && self.mirror_wait == 0 {
            self.mirror.clear();
            self.mirror.resize(self.n, Mirror::default());
            self.find_positions();
        }
    }

    /// Checks the grid's copy of the boxes ([`Grid::mirror`]) where it
    /// claims to be up to date: each position's copy is the box of its
    /// object in the store now, bit for bit, and each object's position is
    /// found from its slot (a shape changed without the copy being told
    /// leaves it wrong, and this catches it).
    pub(crate) fn check_mirror<V: Vector, T>(
        &self,
        store: &Store<crate::Object<V, T>>,
    ) -> Result<(), String> {
        if !self.ok || self.epoch != store.epoch() || self.mirror_at != Some(store.writes()) {
            return Ok(());
        }
        if self.mirror.len() != self.n {
            return Err(format!(
                "the grid's copy of the boxes holds {} boxes for {} objects",
                self.mirror.len(),
                self.n
            ));
        }
        let bits = |m: &Mirror| m.0.map(f32::to_bits);
        for (p, (m, &t)) in self.mirror.iter().zip(&self.slot).enumerate() {
            let slot = slot_of(t);
            let Some(o) = store.get_obj(slot) else {
                return Err(format!(
                    "grid position {p} names slot {slot}, which holds no object"
                ));
            };
            if bits(m) != bits(&Mirror::of(&o.aabb())) {
                return Err(format!(
                    "the grid's copy of the box at position {p} (slot {slot}) is not its object's box"
                ));
            }
            if self.pos_of.get(slot as usize) != Some(&(p as u32)) {
                return Err(format!(
                    "slot {slot} does not lead to its grid position {p}"
                ));
            }
        }
        Ok(())
    }

    /// Whether a refit may read the boxes from the grid's copy
    /// ([`Grid::mirror`]): every move since it was last filled was
    /// written into it, and every object is filed.
    fn mirrored<L, P>(&self, follow: &Follow<L, P>) -> bool {
        follow.all_filed
            && self.mirror_at == Some(follow.writes)
            && self.n > 0
            && self.mirror.len() == self.n
    }

    /// After a move of the object in `slot` to box `b`, the store's count
    /// of writes before it `before` and after it `after` (`None`: the
    /// move changed the objects, removing one): the box into the grid's
    /// copy where the copy was up to date before, so that it stays so
    /// (and the next refit reads it instead of the store).
    #[inline]
    pub fn mirror_move<V: Vector>(
        &mut self,
        slot: u32,
        b: &crate::Aabb<V>,
        before: u64,
        after: Option<u64>,
    ) {
        if self.mirror_at != Some(before) {
            return;
        }
        let Some(after) = after else {
            self.mirror_at = None;
            return;
        };
        match self
            .pos_of
            .get(slot as usize)
            .and_then(|&p| self.mirror.get_mut(p as usize))
        {
            Some(m) => {
                *m = Mirror::of(b);
                self.mirror_at = Some(after);
            }
            None => self.mirror_at = None,
        }
    }

    /// Asks the cache for the copy of the box of the object in `slot`
    /// ([`Grid::mirror_move`]), for a move a little later.
    #[inline]
    pub fn prefetch_mirror(&self, slot: u32) {
        if self.mirror_at.is_some()
            && let Some(m) = self
                .pos_of
                .get(slot as usize)
                .and_then(|&p| self.mirror.get(p as usize))
        {
            crate::kernel::prefetch(m);
        }
    }

    /// The grid follows its objects where they moved, without a new sort
    /// (see the module docs): each position keeps its object and cell,
    /// and takes the object's box now (found through `follow`); each
    /// level's `ext` becomes how far its objects stick out of their cells
    /// now. `false`, the grid left to a new sort, where it cannot: it
    /// was not built, the objects are not the ones sorted (an insertion,
    /// a removal or a filing since), one sticks out by more than its
    /// level's `limit`, or too many left their cells (or would: then no
    /// refit is tried).
    fn refit<V: Vector, L: Locate<V>, P: Fn(u32)>(&mut self, follow: &Follow<L, P>) -> bool {
        let Some(mirrored) = self.refit_start(follow) else {
            return false;
        };
        let ext = {
            let (ctx, mut pieces) = self.follow_pieces(1, mirrored);
            pieces
                .next()
                .and_then(|mut piece| piece.follow(follow, &ctx))
        };
        self.refit_done(ext, follow.writes)
    }

    /// [`Grid::refit`] on rayon's threads, in `parts` pieces: the same
    /// grid on any number of them.
    #[cfg(feature = "rayon")]
    fn refit_par<V: Vector, L: Locate<V> + Sync, P: Fn(u32) + Sync>(
        &mut self,
        follow: &Follow<L, P>,
        parts: usize,
    ) -> bool {
        let Some(mirrored) = self.refit_start(follow) else {
            return false;
        };
        let ext = {
            let (ctx, pieces) = self.follow_pieces(parts, mirrored);
            fold_parts(
                pieces,
                |mut piece| piece.follow(follow, &ctx),
                |a, b| Some(merged_stats(a?, b?)),
            )
            .flatten()
        };
        self.refit_done(ext, follow.writes)
    }

    /// The start of a refit: `None` where none may follow the sort (see
    /// [`Grid::refit_ready`]), else whether it reads the boxes from the
    /// grid's copy (else from the store, into a copy made if there is
    /// none).
    fn refit_start<L, P>(&mut self, follow: &Follow<L, P>) -> Option<bool> {
        if !self.refit_ready(follow.epoch, follow.filed) {
            return None;
        }
        let mirrored = self.mirrored(follow);
        self.mirror_read |= mirrored;
        if !mirrored {
            self.make_mirror();
        }
        Some(mirrored)
    }

    /// Whether a refit may follow the sort, the objects now those of
    /// store epoch `epoch`, `filed` of them in the tree.
    fn refit_ready(&mut self, epoch: u64, filed: usize) -> bool {
        if !self.ok || self.n == 0 || self.n != filed || self.epoch != epoch {
            return false;
        }
        // About as many objects leave their cells each frame: where the
        // next refit would leave too many, none is tried (a refit that
        // fails is wasted work), and the estimate decays, so that one is
        // tried again once the objects calm down.
        if self.movers + self.growth > self.max_movers() {
            self.growth -= self.growth.div_ceil(4);
            return false;
        }
        true
    }

    /// The most objects out of their cells a refit may leave.
    fn max_movers(&self) -> u64 {
        self.n as u64 / MOVERS
    }

    /// The end of a refit: each level's `ext` from how far its objects
    /// stick out (`None`: the refit failed, `false`); the copy of the boxes
    /// is then up to date with the store's count of writes `writes` (where
    /// there is one and the refit went through).
    fn refit_done(&mut self, ext: Option<LevelStats>, writes: u64) -> bool {
        self.mirror_at = (ext.is_some() && self.mirror.len() == self.n).then_some(writes);
        let Some(ext) = ext else {
            // An object drifted too far (or was not found): the next few
            // builds sort without trying (see `refit_ready`).
            self.growth = self.max_movers() + 1;
            return false;
        };
        // Objects out of their cells widen their groups' searches: a new
        // sort once they are too many.
        let movers: u64 = ext.iter().map(|&(_, m)| u64::from(m)).sum();
        self.growth = movers.div_ceil(self.refits + 1);
        if movers > self.max_movers() {
            return false;
        }
        self.refits += 1;
        self.movers = movers;
        for &l in &self.used {
            let lv = &mut self.levels[l as usize];
            lv.ext = with_margin(lv, ext[l as usize].0);
        }
        true
    }

    /// The grid as a refit reads it, and its positions cut into `parts`
    /// pieces (their boxes, which the refit writes).
    fn follow_pieces(
        &mut self,
        parts: usize,
        mirrored: bool,
    ) -> (
        FollowCtx<'_>,
        impl ExactSizeIterator<Item = FollowPiece<'_>>,
    ) {
        let n = self.n;
        let parts = parts.clamp(1, MAX_PARTS);
        let step = n.div_ceil(parts).max(1);
        let mut cuts = [0usize; MAX_PARTS];
        for (i, c) in cuts.iter_mut().enumerate().take(parts).skip(1) {
            *c = (i * step).min(n);
        }
        let cuts = &cuts[1..parts];
        let ctx = FollowCtx {
            mirrored,
            levels: &self.levels,
            used: &self.used,
            origin: self.origin,
            cell_start: &self.cell_start,
            slot: &self.slot,
        };
        let mut boxes = split_boxes(&mut self.lo, &mut self.hi, &mut self.mirror, cuts);
        // In an array, not a `Vec`: a refit allocates nothing.
        let mut pieces: [Option<FollowPiece<'_>>; MAX_PARTS] = core::array::from_fn(|_| None);
        for (i, p) in pieces.iter_mut().enumerate().take(parts) {
            *p = Some(FollowPiece {
                first: (i * step).min(n),
                end: ((i + 1) * step).min(n),
                boxes: boxes.next().expect("a piece per part"),
            });
        }
        let pieces = (0..parts).map(move |i| pieces[i].take().expect("a piece per part"));
        (ctx, pieces)
    }

    /// The levels for a finest cell side `c0` over the objects' box of
    /// `extent` (`d` axes), up to the one of a single cell (or
    /// [`MAX_PARTS`] levels); returns how many cells they have in all.
    fn set_levels(&mut self, c0: f64, extent: &[f64; 3], d: usize) -> usize {
        self.levels.clear();
        let mut base = 0u64;
        let mut c = c0;
        loop {
            let mut dims = [1u32; 3];
            for a in 0..d {
                dims[a] = ((extent[a] / c).floor() + 1.0) as u32;
            }
            let lv = Level {
                inv: (1.0 / c) as f32,
                dims,
                base: base as u32,
                ext: f32::NEG_INFINITY,
                count: 0,
                limit: 0.0,
            };
            base += lv.cells();
            self.levels.push(lv);
            if dims.iter().all(|&k| k == 1) || self.levels.len() >= MAX_PARTS {
                break;
            }
            c *= 2.0;
        }
        base as usize
    }

    /// The build, its passes cut into `parts` pieces (run on rayon's
    /// threads where there are several). Every pass gives the same result
    /// however it is cut: sums and maxima are exact, and the sort's
    /// scatter is cut by destination (each piece writes the cells of its
    /// own range, reading every object in the same order), so the order
    /// within a cell is the one-thread order.
    /// `survey`, where given, must be [`Survey::of`] `items`.
    fn fill<V: Vector, S: Source<V> + ?Sized>(
        &mut self,
        items: &S,
        parts: usize,
        survey: Option<Survey>,
    ) -> bool {
        self.fill_in(items, parts, items.len() >= GATHER_FROM, survey)
    }

    /// [`Grid::fill`], its scatter in two passes where `gather` (see
    /// [`Piece::scatter`]), from `survey` where given (it must be
    /// [`Survey::of`] `items`).
    fn fill_in<V: Vector, S: Source<V> + ?Sized>(
        &mut self,
        items: &S,
        parts: usize,
        gather: bool,
        survey: Option<Survey>,
    ) -> bool {
        let d = V::DIM;
        let chunk = items.len().div_ceil(parts).max(1);
        // The box around every object, how many there are, and their sizes
        // by binary exponent.
        let all = match survey {
            Some(s) => {
                debug_assert!(
                    s == Survey::of(items, 0..items.len()),
                    "the survey given is the source's"
                );
                s
            }
            None => fold_parts(
                ranges(items.len(), chunk),
                |r| Survey::of(items, r),
                Survey::merged,
            )
            .unwrap_or(Survey::EMPTY),
        };
        let (lo, hi, n) = (all.lo, all.hi, all.n);
        self.n = n;
        self.used.clear();
        if n == 0 {
            return true;
        }
        // c0: a power of two at least nine in ten of the sizes (an
        // exponent byte `e` holds sizes below 2^(e - 126)).
        let mut seen = 0u32;
        let want = (n as u32).div_ceil(10).max(1);
        let mut e90 = 0usize;
        for e in (0..256).rev() {
            seen += all.by_exp[e];
            if seen >= want {
                e90 = e;
                break;
            }
        }
        let mut c0 = 2f64.powi(e90 as i32 - 126);
        let extent: [f64; 3] =
            core::array::from_fn(|a| if a < d { f64::from(hi[a] - lo[a]) } else { 0.0 });
        let cap = (4 * n + 1024).min(1 << 30) as f64;
        let cells_at = |c: f64| -> f64 {
            (0..d)
                .map(|a| (extent[a] / c).floor() + 1.0)
                .product::<f64>()
        };
        while cells_at(c0) > cap || (0..d).any(|a| extent[a] / c0 >= MAX_DIM) {
            c0 *= 2.0;
        }
        let mut cells = self.set_levels(c0, &extent, d);
        self.origin = core::array::from_fn(|a| if a < d { lo[a] } else { 0.0 });
        // Cells nearer the spacing of sparse objects: where the finest
        // level has more cells than objects and, in a sample of them, it
        // is sparse (see [`sparse`]), the cells are made twice as large
        // (once). Counted, not guessed from the extent: a few dense
        // crowds in a wide world keep their cells.
        if cells_at(c0) > n as f64
            && self.levels.len() > 1
            && sparse(
                items,
                &Keyer::over(&self.levels, self.origin),
                &mut self.sample_keys,
                &mut self.sample_at,
            )
        {
            c0 *= 2.0;
            cells = self.set_levels(c0, &extent, d);
        }
        // Every key entry is written by the keys' pass (`NONE` for room);
        // the cells' counts start at zero.
        self.src_key.resize(items.len(), NONE);
        self.cell_start.clear();
        self.cell_start.resize(cells + 1, 0);
        let cell_chunk = cells.div_ceil(parts).max(1);
        // Keys, and per level how many objects and how far they stick out
        // of their cells.
        let keyer = Keyer::over(&self.levels, self.origin);
        let stats = if parts == 1 {
            // Objects per cell, counted as the keys are made.
            let counts = &mut self.cell_start[..cells];
            keyer.keys(items, 0..items.len(), &mut self.src_key, |k| {
                counts[k as usize] += 1;
            })
        } else {
            fold_parts(
                ranges(items.len(), chunk).zip(self.src_key.chunks_mut(chunk)),
                |(r, keys)| keyer.keys(items, r, keys, |_| {}),
                merged_stats,
            )
            .unwrap_or(NO_STATS)
        };
        for (lv, (ext, count)) in self.levels.iter_mut().zip(stats) {
            lv.ext = lv.ext.max(ext);
            lv.count += count;
        }
        if parts > 1 {
            // Objects per cell, each piece counting the cells of its range.
            let src_key = &self.src_key;
            for_parts(
                self.cell_start[..cells].chunks_mut(cell_chunk).enumerate(),
                |(pi, counts)| {
                    let first = (pi * cell_chunk) as u32;
                    for &k in src_key {
                        // Room (`NONE`) and other ranges' cells fall outside.
                        if let Some(c) = counts.get_mut(k.wrapping_sub(first) as usize) {
                            *c += 1;
                        }
                    }
                },
            );
        }
        // How crowded: per level, the mean number of objects in an
        // object's cell; every object of that level or a finer one meets
        // about 3^D cells' worth (a rough count, to catch the hopeless).
        let mut expected = 0f64;
        let mut finer = 0f64;
        for lv in &self.levels {
            if lv.count == 0 {
                continue;
            }
            let range =
                &self.cell_start[lv.base as usize..(u64::from(lv.base) + lv.cells()) as usize];
            let sq: u64 = fold_parts(
                range.chunks(cell_chunk),
                |c| c.iter().map(|&k| u64::from(k) * u64::from(k)).sum::<u64>(),
                |a, b| a + b,
            )
            .unwrap_or(0);
            finer += f64::from(lv.count);
            expected += finer * (sq as f64 / f64::from(lv.count));
        }
        if expected > MAX_TESTS_PER_OBJECT * n as f64 + 4096.0 {
            return false;
        }
        for (l, lv) in self.levels.iter_mut().enumerate().rev() {
            if lv.count > 0 {
                lv.limit = lv.ext.max(0.0) + DRIFT;
                lv.ext = with_margin(lv, lv.ext);
                self.used.push(l as u32);
            }
        }
        // Prefix sums (each piece's total first, then each piece from its
        // offset): cell_start[k] becomes the end of cell k.
        let totals = fold_parts(
            self.cell_start[..cells].chunks(cell_chunk).enumerate(),
            |(pi, c)| {
                let mut t = [0u32; MAX_PARTS];
                t[pi] = c.iter().sum::<u32>();
                t
            },
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
        .unwrap_or([0; MAX_PARTS]);
        let mut offsets = [0u32; MAX_PARTS];
        for pi in 1..MAX_PARTS {
            offsets[pi] = offsets[pi - 1] + totals[pi - 1];
        }
        for_parts(
            self.cell_start[..cells].chunks_mut(cell_chunk).zip(offsets),
            |(c, mut sum)| {
                for v in c {
                    sum += *v;
                    *v = sum;
                }
            },
        );
        // The scatter below writes every position under `n` once: only the
        // padding of empty boxes is written here (clearing first wrote
        // every value twice a frame).
        for a in 0..3 {
            let (l, h) = (&mut self.lo[a], &mut self.hi[a]);
            if a < d {
                l.resize(n + 2 * LANES, f32::INFINITY);
                h.resize(n + 2 * LANES, f32::NEG_INFINITY);
                l[n..].fill(f32::INFINITY);
                h[n..].fill(f32::NEG_INFINITY);
            } else {
                l.clear();
                h.clear();
            }
        }
        self.slot.resize(n, NONE);
        // The copy of the boxes is made by the first refit (the objects
        // moved: a scene that never moves never has one), and kept up to
        // date by the sorts after it.
        if n >= MIRROR_FROM && !self.mirror.is_empty() {
            self.mirror.resize(n, Mirror::default());
        } else {
            self.mirror.clear();
        }
        // The scatter, backward (stable: cell_start[k] ends as the start
        // of cell k), cut by destination: pieces of about equal numbers of
        // objects, each a range of cells and so of positions.
        let mut cut_cells = [0usize; MAX_PARTS];
        let mut cut_pos = [0usize; MAX_PARTS];
        for i in 1..parts {
            let target = (n * i / parts) as u32;
            let k = self.cell_start[..cells].partition_point(|&c| c < target);
            cut_cells[i] = (k + 1).min(cells).max(cut_cells[i - 1]);
            cut_pos[i] = self.cell_start[cut_cells[i] - 1] as usize;
        }
        let src_key = core::mem::take(&mut self.src_key);
        let pieces = self.scatter_pieces(&cut_cells[..parts], &cut_pos[..parts], cells);
        for_parts(pieces, |mut piece| piece.scatter(items, &src_key, gather));
        self.src_key = src_key;
        self.cell_start[cells] = n as u32;
        true
    }

    /// The grid's arrays cut at the given cells and positions (the first
    /// of each is 0), for [`Piece::scatter`].
    fn scatter_pieces<'a>(
        &'a mut self,
        cut_cells: &'a [usize],
        cut_pos: &'a [usize],
        cells: usize,
    ) -> impl ExactSizeIterator<Item = Piece<'a>> {
        let at = &cut_pos[1..];
        let mut cs = split_at_all(&mut self.cell_start[..cells], &cut_cells[1..]);
        let mut boxes = split_boxes(&mut self.lo, &mut self.hi, &mut self.mirror, at);
        let mut slot = split_at_all(&mut self.slot, at);
        let mut next = move || {
            let piece = "a piece per part";
            (
                cs.next().expect(piece),
                boxes.next().expect(piece),
                slot.next().expect(piece),
            )
        };
        (0..cut_cells.len()).map(move |i| {
            let (cell_end, boxes, slot) = next();
            Piece {
                first_cell: cut_cells[i] as u32,
                first_pos: cut_pos[i] as u32,
                cell_end,
                boxes,
                slot,
            }
        })
    }

    /// Cuts the search into about `parts` tasks of consecutive positions
    /// (for the threads), into `work`: whole groups of cells, so that
    /// each group's objects search together whatever the cut (the same
    /// counters on any number of threads).
    #[cfg(feature = "rayon")]
    pub fn plan(&self, parts: usize, work: &mut Work) {
        work.tasks.clear();
        let step = self.n.div_ceil(parts.max(1)).max(256);
        let mut s = 0;
        while s < self.n {
            let mut e = (s + step).min(self.n);
            if e < self.n {
                // The start of the group of cells at `e`, or its end where
                // the group starts at or before `s`.
                let (c0, c1) = self.group_of(self.cell_at(e));
                let start = self.cell_start[c0] as usize;
                e = if start > s {
                    start
                } else {
                    self.cell_start[c1] as usize
                };
            }
            work.tasks.push((s as u32, e as u32));
            s = e;
        }
    }

    /// The search over the grid as it stands, its tasks those `plan`
    /// wrote into `work`.
    #[cfg(feature = "rayon")]
    pub fn job<'a, V: Vector, T>(
        &'a self,
        store: &'a Store<Object<V, T>>,
        matrix: &'a LayerMatrix,
        work: &'a Work,
    ) -> Job<'a, V, T> {
        Job {
            grid: self,
            store,
            matrix,
            tasks: &work.tasks,
        }
    }

    /// Every pair, on this thread.
    pub fn run_all<V: Vector, T, F>(
        &self,
        store: &Store<Object<V, T>>,
        matrix: &LayerMatrix,
        work: &mut Work,
        counters: &mut Counters,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let n = self.n as u32;
        let job = Job {
            grid: self,
            store,
            matrix,
            tasks: &[],
        };
        job.range(0, n, work, counters, f);
    }
}

impl Grid {
    /// The cells of level `t` that the box `[qlo, qhi]` (first `d` axes)
    /// grown by the level's `ext` meets: per axis, from `k0` to `k1`
    /// (excluded), clamped to the level; `None` when there are none.
    #[inline(always)]
    fn cells(
        &self,
        t: &Level,
        d: usize,
        qlo: &[f32; 3],
        qhi: &[f32; 3],
    ) -> Option<([u32; 3], [u32; 3])> {
        // From ceil(u0) to floor(u1). On values clamped to at least -1,
        // `floor(x + 1)` is `floor(x) + 1` (or one more where the sum
        // rounds up to a whole number: one cell more, never one less).
        let mut k0 = [0u32; 3];
        let mut k1 = [1u32; 3];
        let mut empty = false;
        for a in 0..d {
            let top = (t.dims[a] - 1) as f32;
            let u0 = (qlo[a] - self.origin[a]) * t.inv - t.ext - 1.0;
            let u1 = (qhi[a] - self.origin[a]) * t.inv + t.ext;
            let c0 = u0.max(-1.0).min(top + 1.0);
            let c1 = u1.max(-1.0).min(top + 1.0);
            let f0 = floor(c0 + 1.0); // floor(c0) + 1
            let lo_k = f0.saturating_sub(u32::from((f0 as f32) - 1.0 >= c0)); // ceil(c0), >= 0
            let hi_k = floor(c1 + 1.0).min(t.dims[a]); // floor(c1) + 1, <= dims
            empty |= lo_k >= hi_k;
            k0[a] = lo_k;
            k1[a] = hi_k;
        }
        (!empty).then_some((k0, k1))
    }

    /// The box arrays of a grid of `d` axes as the chunk test reads them
    /// (`None` for an empty grid).
    #[inline(always)]
    fn boxes(&self, d: usize) -> Option<Boxes<'_>> {
        let (lo, hi, az) = (&self.lo, &self.hi, d - 1);
        Boxes::new(
            [&lo[0], &lo[1], &lo[az]],
            [&hi[0], &hi[1], &hi[az]],
            self.n,
            d,
        )
    }
}

/// A level's `ext` from the farthest an object sticks out of its cell,
/// `out`: with a margin for the rounding of `ext` and of the queries'
/// bounds, a few units in the last place of the largest cell coordinate.
fn with_margin(lv: &Level, out: f32) -> f32 {
    let big = lv.dims.iter().copied().max().unwrap_or(1) as f32;
    out.max(0.0) + (big + out.max(0.0) + 2.0) * (1.0 / (1 << 20) as f32)
}

/// The coordinates of cell `c` of level `lv` (`c` one of its cells).
#[inline]
fn coords(lv: &Level, c: usize) -> [u32; 3] {
    let r = c - lv.base as usize;
    let (dx, dy) = (lv.dims[0] as usize, lv.dims[1] as usize);
    [
        (r % dx) as u32,
        ((r / dx) % dy) as u32,
        (r / dx / dy) as u32,
    ]
}

/// The cell after the last of the group of cells that holds column `x`
/// of a row of `dx` cells (the groups are [`GROUP`] cells from the row's
/// start, the last one cut at the row's end), as a column.
#[inline(always)]
fn group_end(x: u32, dx: u32) -> usize {
    ((x as usize / GROUP + 1) * GROUP).min(dx as usize)
}

/// The bits of the positions of a step of `width` (8 or 16) from `b`
/// that are objects of the row ending at `e` (all of them when the row
/// goes on); `b < e`.
#[inline(always)]
fn valid(b: usize, e: usize, width: usize) -> u32 {
    debug_assert!(width <= 2 * LANES);
    (1u32 << (e - b).min(width)) - 1
}

/// The pair search over a built grid.
pub(crate) struct Job<'a, V: Vector, T> {
    grid: &'a Grid,
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    tasks: &'a [(u32, u32)],
}

/// [`Job::range_in`] with the chunk test `$kind`, compiled for the
/// processor feature `$feature` as a whole: the search's one copy per
/// form.
macro_rules! compiled_for {
    ($(#[$doc:meta])* $name:ident, $feature:literal, $kind:expr) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name<F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>)>(
            &self,
            (span, work, counters, f): (
                core::ops::Range<usize>,
                &mut Work,
                &mut Counters,
                &mut F,
            ),
        ) {
            // SAFETY: the caller promises the feature (this function's
            // contract), which `$kind` needs.
            unsafe { self.range_in($kind, span, work, counters, f) }
        }
    };
}

impl<'a, V: Vector, T> Job<'a, V, T> {
    /// The exact tests of the buffered box hits (`cand` is overwritten).
    #[inline(never)]
    fn flush<F>(&self, cand: &mut [[u32; 2]], counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let g = self.grid;
        let store = self.store;
        // Ask for every object's slot first: the prefetches, independent
        // of each other and of the tests, overlap their cache misses; the
        // tests below then find the objects near. Hints, not loads: a
        // pass of loads waited for each miss to retire, and the processor
        // could overlap only the few within its reorder window (measured
        // in the `frames` example: the loose octree's pair search at 1M
        // 132-144 -> 107-120 ns an object). Not where the objects fit the
        // cache (measured: from any size, the pass made the frame at 10k
        // objects 5-10% slower).
        if g.n >= ASK_FROM {
            for &[i, j] in cand.iter() {
                store.prefetch_obj(slot_of(g.slot[i as usize]));
                store.prefetch_obj(slot_of(g.slot[j as usize]));
            }
        }
        // The tests without a branch on their outcome (about one box hit in
        // two is a pair: a coin toss to the branch predictor): the pairs'
        // slots are written over the hits already read, and counted.
        let mut found = 0;
        let mut tests = 0;
        // The default matrix (every layer meets every layer) once here,
        // not its rows at every test.
        let matrix = (*self.matrix != LayerMatrix::ALL).then_some(self.matrix);
        for c in 0..cand.len() {
            let [i, j] = cand[c];
            let (i, j) = (i as usize, j as usize);
            let (ta, tb) = (g.slot[i], g.slot[j]);
            let (sa, sb) = (slot_of(ta), slot_of(tb));
            let moving = !static_of(ta & tb);
            // The boxes met in the chunk test, on the grid's copies of
            // the objects' boxes.
            let hit = moving
                & store
                    .obj(sa)
                    .pairs_with_where_boxes_meet(store.obj(sb), matrix);
            tests += u64::from(moving);
            cand[found] = [sa, sb];
            found += usize::from(hit);
        }
        counters.shape_tests += tests;
        // The pairs' handles read their slots' generations, asked for at
        // once in the same way.
        if g.n >= ASK_FROM {
            for &[sa, sb] in &cand[..found] {
                store.prefetch_gen(sa);
                store.prefetch_gen(sb);
            }
        }
        for &[sa, sb] in &cand[..found] {
            report_found(store, sa, sb, f);
        }
    }

    /// The box hits of chunk hits `hits` (object, start in the run whose
    /// grid positions are `pos`, mask) into `cand[k..]`, their exact
    /// tests run whenever `cand` fills.
    #[inline(always)]
    fn expand<F>(
        &self,
        hits: &[(u32, u32, u32)],
        pos: &[u32],
        cand: &mut [[u32; 2]],
        k: &mut usize,
        counters: &mut Counters,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        for &(i, b, mm) in hits {
            let b = b as usize;
            // The first two hits without a branch (the second written
            // always, kept if it is one), the others (rare) in a loop.
            cand[*k] = [i, pos[b + mm.trailing_zeros() as usize]];
            *k += 1;
            let mm = mm & (mm - 1);
            cand[*k] = [i, pos[b + (mm.trailing_zeros() & 15) as usize]];
            *k += usize::from(mm != 0);
            let mut mm = mm & mm.wrapping_sub(1);
            while mm != 0 {
                cand[*k] = [i, pos[b + mm.trailing_zeros() as usize]];
                *k += 1;
                mm &= mm - 1;
            }
            if *k >= CANDIDATES {
                self.flush(&mut cand[..*k], counters, f);
                *k = 0;
            }
        }
    }

    /// The pairs found by the objects at positions `start..end`: compiled
    /// for AVX-512F or AVX2 where the processor has it ([`Kind::best`]).
    pub fn range<F>(
        &self,
        start: u32,
        end: u32,
        work: &mut Work,
        counters: &mut Counters,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        #[cfg(target_arch = "x86_64")]
        match Kind::best() {
            Kind::Avx512 => {
                // SAFETY: `best` found AVX-512F on this processor.
                unsafe { self.range_avx512((start as usize..end as usize, work, counters, f)) };
                return;
            }
            Kind::Avx2 => {
                // SAFETY: `best` found AVX2 on this processor.
                unsafe { self.range_avx2((start as usize..end as usize, work, counters, f)) };
                return;
            }
            Kind::Lanes4 => {}
        }
        // SAFETY: the 4-wide form runs on every processor.
        unsafe {
            self.range_in(
                Kind::Lanes4,
                start as usize..end as usize,
                work,
                counters,
                f,
            )
        };
    }

    compiled_for! {
        /// [`Job::range_in`] with the 8-wide chunk test, compiled for AVX2
        /// as a whole (`range_in` is inlined here; through a closure, as
        /// [`lanes::with_avx2`] takes it, the search grew past what the
        /// compiler inlines, and every intrinsic became a call).
        ///
        /// # Safety
        /// The processor must have AVX2.
        range_avx2, "avx2", Kind::Avx2
    }

    compiled_for! {
        /// [`Job::range_avx2`] with the 16-wide steps of AVX-512F
        /// ([`Boxes::mask16`]), compiled for it as a whole.
        ///
        /// # Safety
        /// The processor must have AVX-512F.
        range_avx512, "avx512f", Kind::Avx512
    }

    /// [`Job::range`] with the chunk test `kind`, over the positions
    /// `span`.
    ///
    /// The objects are taken a group of cells at a time ([`GROUP`]). The
    /// rows a group's objects search (at their own level the cells after
    /// theirs, at every coarser level the cells their grown boxes meet)
    /// are found once for the group, from the box around its objects, and
    /// their boxes copied into one padded run; each object then tests
    /// that run, eight boxes at a time, in one loop. The group's own row
    /// comes first in the run, from the group's first object, so that
    /// each object starts after itself. A box meets an object's box only
    /// inside that object's own rows, so the hits are those of a search of
    /// each object's own rows, in row order (its own level's rows first,
    /// then the coarser levels', coarsest first).
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2; with
    /// [`Kind::Avx512`], AVX-512F.
    #[inline(always)]
    unsafe fn range_in<F>(
        &self,
        kind: Kind,
        span: core::ops::Range<usize>,
        work: &mut Work,
        counters: &mut Counters,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let g = self.grid;
        if g.boxes(V::DIM).is_none() {
            // Only an empty grid has arrays too short (`Grid::check`).
            debug_assert_eq!(g.n, 0, "a grid with objects has padded arrays");
            return;
        }
        let d = V::DIM;
        let az = d - 1;
        let Work {
            cand, run, hits, ..
        } = work;
        // (A chunk hit covers two chunks: up to 16 box hits past the
        // buffer's fill.)
        if cand.len() < CANDIDATES + 2 * LANES {
            cand.resize(CANDIDATES + 2 * LANES, [0; 2]);
        }
        let mut k = 0;
        let (mut rows, mut tests) = (0u64, 0u64);
        // Levels in the grid's order (finest first), so that the tasks'
        // results, joined in position order, come in this order too.
        for ui in (0..g.used.len()).rev() {
            let li = g.used[ui] as usize;
            let lv = &g.levels[li];
            let first = g.cell_start[lv.base as usize] as usize;
            let last = first + lv.count as usize;
            let (s, e) = (first.max(span.start), last.min(span.end));
            let mut gs = s;
            // The cell holding position `gs`, found once, then followed
            // along `cell_start` past the empty cells.
            let mut cell = if gs < e { g.cell_at(gs) } else { 0 };
            while gs < e {
                while g.cell_start[cell + 1] as usize <= gs {
                    cell += 1;
                }
                // The first object's cell by axis (from the cell's
                // number: after a refit, the object may have left it),
                // then the rest of its group: the group's objects in the
                // span are `gs..ge`.
                let own = coords(lv, cell);
                let first_cell = cell;
                cell += group_end(own[0], lv.dims[0]) - own[0] as usize - 1;
                let ge = (g.cell_start[cell + 1] as usize).min(e);
                // The box around them.
                let mut ulo = [f32::INFINITY; 3];
                let mut uhi = [f32::NEG_INFINITY; 3];
                for j in gs..ge {
                    for a in 0..3 {
                        if a < d {
                            ulo[a] = ulo[a].min(g.lo[a][j]);
                            uhi[a] = uhi[a].max(g.hi[a][j]);
                        }
                    }
                }
                run.clear();
                // The own level: the own row from the group's first object,
                // then the rows after it.
                let own_cells = g.cells(lv, d, &ulo, &uhi);
                let (dx, dy) = (lv.dims[0], lv.dims[1]);
                debug_assert_eq!(
                    lv.base + (own[2] * dy + own[1]) * dx + own[0],
                    first_cell as u32,
                    "the first object's cell by its coordinates"
                );
                debug_assert!(
                    own_cells
                        .is_some_and(|(k0, k1)| (0..d).all(|a| k0[a] <= own[a] && own[a] < k1[a])),
                    "the rows around a group's objects hold its first cell"
                );
                // (At least the end of the group's last cell, `cell`: the
                // rows hold it.)
                let own_end = match own_cells {
                    Some((_, k1)) => lv.base + (own[2] * dy + own[1]) * dx + k1[0],
                    None => cell as u32 + 1,
                }
                .max(cell as u32 + 1);
                run.push(g, d, gs, g.cell_start[own_end as usize] as usize);
                rows += 1;
                if let Some((k0, k1)) = own_cells {
                    for z in k0[2].max(own[2])..k1[2] {
                        let y0 = if z == own[2] { own[1] + 1 } else { k0[1] };
                        for y in y0..k1[1] {
                            let row = lv.base + (z * dy + y) * dx;
                            let rs = g.cell_start[(row + k0[0]) as usize] as usize;
                            let re = g.cell_start[(row + k1[0]) as usize] as usize;
                            run.push(g, d, rs, re);
                            rows += 1;
                        }
                    }
                }
                // The coarser levels: every row the grown boxes meet.
                for &ti in &g.used[..ui] {
                    let t = &g.levels[ti as usize];
                    let Some((k0, k1)) = g.cells(t, d, &ulo, &uhi) else {
                        continue;
                    };
                    let (dx, dy) = (t.dims[0], t.dims[1]);
                    for z in k0[2]..k1[2] {
                        for y in k0[1]..k1[1] {
                            let row = t.base + (z * dy + y) * dx;
                            let rs = g.cell_start[(row + k0[0]) as usize] as usize;
                            let re = g.cell_start[(row + k1[0]) as usize] as usize;
                            run.push(g, d, rs, re);
                            rows += 1;
                        }
                    }
                }
                let m = run.seal(d);
                let Some(bx) = run.boxes(az) else {
                    unreachable!("a sealed run is padded");
                };
                // (Sealed with sixteen empty boxes: the 16-wide form's.)
                let bx = if kind == Kind::Avx512 {
                    bx.padded16()
                } else {
                    bx
                };
                // The chunks that hit, without a branch on the outcome
                // (most chunks hit nothing): the object, the chunk's start
                // and its mask, kept where the mask is not empty.
                // Room for one object's chunks at least; the hits are
                // expanded whenever the next object's might not fit.
                let chunks = m.div_ceil(LANES) + 1;
                if hits.len() < chunks.max(HITS) {
                    hits.resize(chunks.max(HITS), (0, 0, 0));
                }
                let mut h = 0;
                // (A slice, not the vector: its start and length stay in
                // registers through the chunk loop.)
                let hits = hits.as_mut_slice();
                for i in gs..ge {
                    if h + chunks > hits.len() {
                        self.expand(&hits[..h], &run.pos, cand, &mut k, counters, f);
                        h = 0;
                    }
                    let mut qlo = [0f32; 3];
                    let mut qhi = [0f32; 3];
                    for a in 0..d {
                        qlo[a] = g.lo[a][i];
                        qhi[a] = g.hi[a][i];
                    }
                    let q = Query::of(az, &qlo, &qhi);
                    // After itself in its own row (which starts at `gs`);
                    // sixteen boxes a step: two chunks, their masks joined
                    // (measured with the `frames` example, the loose
                    // octree's pair search at 10k: 71-72 -> 68-70 ns an
                    // object, 34 instructions fewer; four chunks a step
                    // did no better), or one 16-wide test.
                    let mut b = i + 1 - gs;
                    tests += m.saturating_sub(b) as u64;
                    // (Bounded by the boxes' own count, `m`, so that the
                    // chunk test's clamp to it folds away.)
                    while b < bx.len() {
                        // SAFETY: `kind` is AVX2 or AVX-512F only on a
                        // processor that has it (this function's
                        // contract). The run's padding boxes meet nothing
                        // (a chunk from past the run is taken from its
                        // padding).
                        let mm = unsafe { bx.mask16(kind, &q, b) };
                        hits[h] = (i as u32, b as u32, mm);
                        h += usize::from(mm != 0);
                        b += 2 * LANES;
                    }
                }
                self.expand(&hits[..h], &run.pos, cand, &mut k, counters, f);
                gs = ge;
            }
        }
        self.flush(&mut cand[..k], counters, f);
        counters.node_visits += rows;
        counters.pair_tests += tests;
    }
}

#[cfg(feature = "rayon")]
impl<V: Vector, T> super::PairTasks<V, T> for Job<'_, V, T> {
    type Task = (u32, u32);
    type Work = Work;

    fn tasks(&self) -> &[(u32, u32)] {
        self.tasks
    }

    fn run<F>(&self, task: (u32, u32), work: &mut Work, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        self.range(task.0, task.1, work, counters, f);
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, coords, floor};
    use crate::kernel::Family;
    use crate::{
        Aabb, Counters, Filter, Handle, LayerMatrix, LooseOrthtree, ObjectDesc, Ray, Shape,
        SpatialIndex, Vector,
    };
    use glam::{Vec2, Vec3};
    use sparti_scenes::XorShift;

    /// A small scene: spheres and boxes of mixed sizes (some far larger,
    /// on coarser levels), a few static, on two layers, from a fixed
    /// xorshift (small enough for Miri).
    fn scene<V: Vector>(n: usize) -> LooseOrthtree<V, u32> {
        scene_in(LooseOrthtree::<V, u32>::new(), n)
    }

    /// [`scene`]'s objects in tree `t`.
    fn scene_in<V: Vector>(mut t: LooseOrthtree<V, u32>, n: usize) -> LooseOrthtree<V, u32> {
        let mut r = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut next = move || r.next_unit();
        for i in 0..n {
            let mut c = V::ZERO;
            for a in 0..V::DIM {
                c = c.with(a, next() * 40.0);
            }
            let r = if i % 17 == 0 { 6.0 } else { 0.3 + next() * 1.5 };
            let shape = if i % 5 == 0 {
                Shape::cuboid(c, V::splat(r * 0.7))
            } else {
                Shape::sphere(c, r)
            };
            let desc = ObjectDesc::new(shape, i as u32)
                .with_layer(1 << (i % 2))
                .with_static(i % 11 == 0);
            t.insert(desc).expect("valid object");
        }
        t.set_layer_matrix(LayerMatrix::ALL);
        t.flush();
        t
    }

    /// The grid's pairs with the chunk test `kind`, in search order.
    fn grid_pairs<V: Vector>(t: &LooseOrthtree<V, u32>, kind: Kind) -> Vec<(Handle, Handle)> {
        let core = t.core();
        let filed = core.filed();
        let g = core.grid.get(|g| g.build(|| &filed, &core.follow()));
        assert!(g.is_built(), "the scene is sparse enough for the grid");
        let job = super::Job {
            grid: g,
            store: &core.store,
            matrix: &core.matrix,
            tasks: &[],
        };
        let mut out = Vec::new();
        let mut work = super::Work::default();
        let mut c = Counters::default();
        let mut f = |a, b, _: &_, _: &_| out.push((a, b));
        match kind {
            // SAFETY: the 4-wide form runs everywhere.
            Kind::Lanes4 => unsafe { job.range_in(kind, 0..g.n, &mut work, &mut c, &mut f) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: only asked for where `available` found AVX2.
            Kind::Avx2 => unsafe { job.range_avx2((0..g.n, &mut work, &mut c, &mut f)) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: only asked for where `available` found AVX-512F.
            Kind::Avx512 => unsafe { job.range_avx512((0..g.n, &mut work, &mut c, &mut f)) },
            #[cfg(not(target_arch = "x86_64"))]
            Kind::Avx2 | Kind::Avx512 => unreachable!("AVX2 and AVX-512 are x86-64's"),
        }
        out
    }

    /// Every pair of `t`'s objects, by testing each against each, sorted.
    /// Each object's box is computed once, and the pairs whose boxes do
    /// not meet are passed over (`pairs_with` tests the boxes too, so the
    /// pairs are the same): under Miri, `pairs_with` computing two sphere
    /// boxes for each of 11,175 pairs made three quarters of the chunk
    /// tests' time.
    fn brute_pairs<V: Vector>(t: &LooseOrthtree<V, u32>) -> Vec<(Handle, Handle)> {
        let mut want: Vec<(Handle, Handle)> = Vec::new();
        let objs: Vec<_> = t.objects().map(|(h, o)| (h, o, o.aabb())).collect();
        for (i, &(ha, a, ba)) in objs.iter().enumerate() {
            for &(hb, b, bb) in &objs[i + 1..] {
                if ba.intersects(&bb) && a.pairs_with(b, &LayerMatrix::ALL) {
                    want.push(if ha < hb { (ha, hb) } else { (hb, ha) });
                }
            }
        }
        want.sort_unstable();
        want
    }

    /// The grid's pairs with every chunk test this processor runs are
    /// the brute force's, in the same order with each; returns them in
    /// search order.
    fn both_forms_find<V: Vector>(t: &LooseOrthtree<V, u32>) -> Vec<(Handle, Handle)> {
        let want = brute_pairs(t);
        if cfg!(miri) && cfg!(target_feature = "avx512f") {
            // CI's second run under Miri, built for AVX-512F: the 4-wide
            // search ran in the first, so only the 16-wide one runs here
            // (minutes saved), against the brute force; the same order
            // as the 4-wide one's is checked by the tests on a processor
            // that has AVX-512F.
            assert!(Kind::available().contains(&Kind::Avx512));
            let wide = grid_pairs(t, Kind::Avx512);
            let mut sorted = wide.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, want, "16-wide chunks against the brute force");
            return wide;
        }
        let four = grid_pairs(t, Kind::Lanes4);
        let mut sorted = four.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, want, "4-wide chunks against the brute force");
        if cfg!(target_feature = "avx2") {
            // Built for AVX2 (as under Miri in CI): the 8-wide form runs.
            assert!(Kind::available().contains(&Kind::Avx2));
        }
        if cfg!(target_feature = "avx512f") {
            // Built for AVX-512F (Miri in CI): the 16-wide form runs.
            assert!(Kind::available().contains(&Kind::Avx512));
        }
        // (The 4-wide search ran above: the other forms against it.)
        for kind in Kind::available().into_iter().filter(|&k| k != Kind::Lanes4) {
            if cfg!(miri) && kind == Kind::Avx2 && Kind::available().contains(&Kind::Avx512) {
                // The AVX2 search differs from the AVX-512 one only in its
                // step (`Boxes::mask16`), whose both forms the lanes' own
                // tests run under Miri: minutes saved in CI.
                continue;
            }
            assert_eq!(grid_pairs(t, kind), four, "{kind:?} chunks, same order");
        }
        four
    }

    /// Every chunk test gives the brute force's pairs, in the same order,
    /// through the unchecked loads (run under Miri in CI, without SIMD
    /// beyond SSE2 and with AVX-512F).
    fn both_forms_agree<V: Vector>() {
        let t = scene::<V>(150);
        let objs: Vec<_> = t.objects().collect();
        let pairs = both_forms_find(&t);
        assert!(pairs.len() > 20, "a scene with pairs ({})", pairs.len());
        // The queries' chunks (the same loads): boxes and rays on the
        // grid, against every object's own test.
        let before = t.counters().grid_searches;
        let mut found = Vec::new();
        for (i, &(_, o)) in objs.iter().enumerate().step_by(13) {
            let q = Aabb {
                min: o.aabb().min - V::splat(i as f32 * 0.1),
                max: o.aabb().max,
            };
            t.query_aabb(&q, Filter::ALL, &mut found);
            found.sort_unstable();
            let mut want: Vec<Handle> = objs
                .iter()
                .filter(|(_, b)| b.shape.intersects_aabb(&q))
                .map(|&(h, _)| h)
                .collect();
            want.sort_unstable();
            assert_eq!(found, want, "box query {i}");
            let mut dir = V::ZERO;
            dir = dir.with(0, 1.0);
            let ray = Ray::new(o.aabb().min - V::splat(5.0), dir).expect("valid ray");
            let hit = t.ray_nearest(&ray, 100.0, Filter::ALL).map(|h| h.distance);
            let best = objs
                .iter()
                .filter_map(|(_, b)| b.shape.cast_ray(&ray, 100.0).map(|h| h.distance))
                .reduce(f32::min);
            assert_eq!(hit, best, "ray {i}");
        }
        assert!(
            t.counters().grid_searches > before,
            "the queries took the grid"
        );
    }

    /// One crowded cell: 61 objects (25 under Miri) whose centres lie in
    /// one cell, beside a sparse rest. Its objects search a run longer
    /// than two chunks (the copy's loop) whose chunk hits overflow the
    /// buffer (61 objects of at least 8 chunks each against room for 256;
    /// under Miri 25 of at least 4 against 16: listed before the next
    /// object's), and every pair of them is found once.
    fn a_crowded_cell_agrees<V: Vector>() {
        let mut r = XorShift(0x2545_F491_4F6C_DD1D);
        let mut next = move || r.next_unit();
        let mut t = LooseOrthtree::<V, u32>::new();
        // Every object of size 2 (cells of side 4), one from the origin,
        // so that the cells start there: centres within [1.5, 2.5] all
        // fall in the first cell.
        let mut add = |c: V, i: u32| {
            t.insert(ObjectDesc::new(Shape::sphere(c, 1.0), i))
                .expect("valid object");
        };
        add(V::splat(1.0), 0);
        let crowd = if cfg!(miri) { 25 } else { 61 };
        for i in 1..crowd {
            let mut c = V::ZERO;
            for a in 0..V::DIM {
                c = c.with(a, 1.5 + next());
            }
            add(c, i);
        }
        for i in crowd..crowd + 39 {
            let mut c = V::ZERO;
            for a in 0..V::DIM {
                c = c.with(a, 5.0 + next() * 35.0);
            }
            add(c, i);
        }
        t.flush();
        let core = t.core();
        let filed = core.filed();
        let g = core.grid.get(|g| g.build(|| &filed, &core.follow()));
        let most = g.cell_start.windows(2).map(|w| w[1] - w[0]).max();
        assert_eq!(most, Some(crowd), "one cell holds the cluster");
        let pairs = both_forms_find(&t);
        // The centres in [1.5, 2.5] lie within 2 of each other.
        let c = crowd as usize - 1;
        assert!(pairs.len() >= c * (c - 1) / 2, "the crowded cell's pairs");
        // Rays across the crowd, both ways: a stretch meets more boxes
        // than the walk gathers before it visits them (3 in the unit
        // tests), and the nearest hit is still the brute force's.
        let objs: Vec<_> = t.objects().collect();
        for k in 0..8 {
            for (x, dx) in [(-5.0, 1.0), (45.0, -1.0)] {
                let mut o = V::splat(1.5 + k as f32 * 0.125);
                o = o.with(0, x);
                let ray = Ray::new(o, V::ZERO.with(0, dx)).expect("valid ray");
                let hit = t.ray_nearest(&ray, 100.0, Filter::ALL).map(|h| h.distance);
                let best = objs
                    .iter()
                    .filter_map(|(_, b)| b.shape.cast_ray(&ray, 100.0).map(|h| h.distance))
                    .reduce(f32::min);
                assert!(best.is_some(), "the ray meets the crowd");
                assert_eq!(hit, best, "ray {k} from {x}");
            }
        }
    }

    /// The grid is the same, position for position, however its build is
    /// cut into pieces and whether its scatter gathers or not.
    #[test]
    fn every_form_of_the_build_gives_the_same_grid() {
        fn arrays(g: &super::Grid) -> impl PartialEq + core::fmt::Debug + '_ {
            (
                (&g.lo, &g.hi, &g.slot),
                (&g.cell_start, &g.used, g.n, g.origin),
            )
        }
        fn check<V: Vector>(n: usize) {
            let t = scene::<V>(n);
            let items = &t.core().filed();
            let mut one = super::Grid::default();
            assert!(one.fill_in(items, 1, false, None), "a sparse scene");
            for parts in 1..=3 {
                for gather in [false, true] {
                    let mut g = super::Grid::default();
                    assert!(g.fill_in(items, parts, gather, None));
                    assert_eq!(arrays(&g), arrays(&one), "{parts} parts, gather {gather}");
                }
            }
        }
        // (Smaller under Miri: the gather is asked for, whatever the size.)
        let (n3, n2) = if cfg!(miri) { (60, 40) } else { (150, 90) };
        check::<Vec3>(n3);
        check::<Vec2>(n2);
    }

    /// Moves every object of `t` a little (objects `i % 7 == 0` by
    /// `far`, the others by `step`), along a direction that turns with
    /// `k`.
    fn nudge<V: Vector>(t: &mut LooseOrthtree<V, u32>, k: usize, step: f32, far: f32) {
        let moves: Vec<_> = t
            .objects()
            .map(|(h, o)| (h, o.shape, o.value as usize))
            .collect();
        for (h, shape, i) in moves {
            let d = if i % 7 == 0 { far } else { step };
            let mut v = V::ZERO;
            for a in 0..V::DIM {
                let s = if (i + k + a).is_multiple_of(2) { d } else { -d };
                v = v.with(a, s);
            }
            let moved = match shape {
                Shape::Sphere(s) => Shape::sphere(s.center + v, s.radius),
                Shape::Box(b) => Shape::Box(Aabb {
                    min: b.min + v,
                    max: b.max + v,
                }),
            };
            t.update(h, moved).expect("inside the world");
        }
    }

    /// The grid follows objects that moved a little (no new sort), finds
    /// the brute force's pairs with both chunk tests and passes its
    /// check; an object that moved far, an insertion and a removal each
    /// bring a new sort.
    fn a_refit_follows_the_objects<V: Vector>() {
        let mut t = scene::<V>(150);
        let refits = |t: &LooseOrthtree<V, u32>| t.core().grid.with_current(|g| g.refits);
        both_forms_find(&t);
        assert_eq!(refits(&t), 0, "the first build sorts");
        for k in 0..3 {
            nudge(&mut t, k, 0.01, 0.01);
            both_forms_find(&t);
            t.validate().expect("a valid tree and grid");
            assert_eq!(refits(&t), k as u64 + 1, "small moves are followed");
        }
        // The objects out of their cells: within the limit, and as many
        // as a count one object at a time finds (the cell of each
        // position against the cell of its centre, as the sort computes
        // it).
        let (movers, most, counted) = t.core().grid.with_current(|g| {
            let counted = (0..g.n)
                .filter(|&p| {
                    let c = g.cell_at(p);
                    let lv = g
                        .levels
                        .iter()
                        .find(|l| (c as u64) < u64::from(l.base) + l.cells())
                        .expect("a level holds the cell");
                    let own = coords(lv, c);
                    (0..V::DIM).any(|a| {
                        let u0 = (g.lo[a][p] - g.origin[a]) * lv.inv;
                        let u1 = (g.hi[a][p] - g.origin[a]) * lv.inv;
                        let top = (lv.dims[a] - 1) as f32;
                        floor(((u0 + u1) * 0.5).max(0.0).min(top)) != own[a]
                    })
                })
                .count() as u64;
            (g.movers, g.max_movers(), counted)
        });
        assert_eq!(movers, counted, "the objects out of their cells");
        assert!(movers > 0, "some objects left their cells");
        assert!(
            movers <= most,
            "{movers} objects out of their cells, at most {most}"
        );
        // A seventh of the objects jump by three cells' worth of space:
        // too far for the grid's reach.
        nudge(&mut t, 9, 0.0, 12.0);
        both_forms_find(&t);
        t.validate().expect("a valid tree and grid");
        assert_eq!(refits(&t), 0, "far moves bring a new sort");
        // The next few builds sort without trying (a failed refit is
        // wasted work), then the refits come back.
        let mut k = 0;
        while refits(&t) == 0 {
            k += 1;
            assert!(k <= 12, "the refits come back after a few sorts");
            nudge(&mut t, k, 0.01, 0.01);
            both_forms_find(&t);
        }
        assert!(k > 1, "not at once after a failed refit ({k})");
        // Insertions and removals change the objects: a new sort.
        let h = t
            .insert(ObjectDesc::new(Shape::sphere(V::splat(5.0), 1.0), 999))
            .expect("valid");
        t.flush();
        both_forms_find(&t);
        assert_eq!(refits(&t), 0, "an insertion brings a new sort");
        nudge(&mut t, 2, 0.01, 0.01);
        both_forms_find(&t);
        assert_eq!(refits(&t), 1);
        t.remove(h).expect("live");
        both_forms_find(&t);
        assert_eq!(refits(&t), 0, "a removal brings a new sort");
        t.validate().expect("a valid tree and grid");
    }

    /// Whether the grid's copy of the boxes is up to date, the refits
    /// since the last sort, and the boxes the copy holds.
    fn copy_state<V: Vector>(t: &LooseOrthtree<V, u32>) -> (bool, u64, usize) {
        let writes = t.core().store.writes();
        t.core()
            .grid
            .with_current(|g| (g.mirror_at == Some(writes), g.refits, g.mirror.len()))
    }

    /// The first refit makes the grid's copy of the boxes; the moves (one
    /// at a time, or in a small batch) keep it up to date, and the refits
    /// then read it (not the store); a write the copy is not told of
    /// leaves it out of date, and the next refit reads the store and
    /// writes it anew; a sort fills it. The pairs are the brute force's
    /// throughout, and `validate` checks the copy against the objects
    /// (and catches a copy gone wrong).
    fn the_moves_keep_the_grids_copy_of_the_boxes<V: Vector>() {
        let mut t = scene::<V>(300);
        let state = copy_state::<V>;
        both_forms_find(&t);
        assert_eq!(state(&t), (false, 0, 0), "no copy before the objects move");
        for k in 0..3 {
            nudge(&mut t, k, 0.01, 0.01);
            assert_eq!(
                state(&t).0,
                k > 0,
                "the moves keep the copy, once made, up to date"
            );
            both_forms_find(&t);
            t.validate().expect("a valid tree, grid and copy");
            assert_eq!(
                state(&t),
                (true, k as u64 + 1, 300),
                "a refit made or read the copy"
            );
        }
        // A small batch of moves writes the copy too (one move at a time).
        let moves: Vec<_> = t
            .objects()
            .map(|(h, o)| {
                let b = o.aabb();
                let v = V::splat(0.01);
                let b = Aabb {
                    min: b.min + v,
                    max: b.max + v,
                };
                (h, Shape::Box(b))
            })
            .collect();
        t.update_many(&moves).expect("inside the world");
        assert!(state(&t).0, "a small batch kept the copy up to date");
        both_forms_find(&t);
        assert_eq!(state(&t), (true, 4, 300));
        // A write to an object the copy is not told of (as the phases of
        // a large batch write the shapes) leaves it out of date: the next
        // refit reads the store, and writes the copy anew.
        let slot = t.core().store.resolve(moves[3].0).expect("live");
        let core = t.core_mut();
        let shape = core.store.obj(slot).shape;
        core.store.obj_mut(slot).shape = shape;
        core.grid.edit();
        assert!(!state(&t).0, "an untold write leaves the copy out of date");
        both_forms_find(&t);
        assert_eq!(
            state(&t),
            (true, 5, 300),
            "a refit from the store writes the copy"
        );
        t.validate().expect("a valid tree, grid and copy");
        // Far moves bring a new sort, which fills the copy there is.
        nudge(&mut t, 9, 0.0, 12.0);
        both_forms_find(&t);
        assert_eq!(state(&t), (true, 0, 300), "a sort fills the copy");
        t.validate().expect("a valid tree, grid and copy");
        // A copy gone wrong is caught.
        nudge(&mut t, 5, 0.01, 0.01);
        t.core_mut().grid.edit().mirror[7].0[0] += 0.5;
        let e = t.validate().expect_err("a wrong copy is caught");
        assert!(e.0.contains("copy of the box"), "{e}");
    }

    /// A small refit, whose one `unsafe` (the call of its AVX2 form,
    /// which runs where the processor or the build has AVX2: under Miri,
    /// CI's run built for AVX-512F) Miri runs: the moved objects are
    /// followed, and their pairs are the brute force's.
    #[test]
    fn a_small_refit_finds_the_brute_force_pairs() {
        let mut t = scene::<Vec3>(40);
        let refits = |t: &LooseOrthtree<Vec3, u32>| t.core().grid.with_current(|g| g.refits);
        let mut pairs = Vec::new();
        t.pairs(&mut pairs);
        nudge(&mut t, 1, 0.01, 0.01);
        t.pairs(&mut pairs);
        assert_eq!(refits(&t), 1, "small moves are followed");
        let mut found: Vec<_> = pairs.iter().map(|p| (p.a, p.b)).collect();
        found.sort_unstable();
        assert_eq!(found, brute_pairs(&t), "the refit grid's pairs");
        t.validate().expect("a valid tree and grid");
    }

    /// Every object's box lies inside the grid's reach, after a sort and
    /// after refits that left objects out of their cells (the reach grows
    /// with each level's `ext`); far from the origin too, where it is
    /// either such a box or `None`.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn the_reach_holds_every_object() {
        fn check<V: Vector>(t: &LooseOrthtree<V, u32>, what: &str) -> bool {
            let reach = t.core().grid.with_current(|g| g.reach::<V>());
            let Some(reach) = reach else {
                return false;
            };
            for (h, o) in t.objects() {
                let b = o.aabb();
                for a in 0..V::DIM {
                    assert!(
                        reach.min.get(a) < b.min.get(a) && b.max.get(a) < reach.max.get(a),
                        "{what}: {h:?} {b:?} outside {reach:?}"
                    );
                }
            }
            true
        }
        fn run<V: Vector>(offset: f32) -> usize {
            let mut t = scene::<V>(300);
            if offset != 0.0 {
                let moves: Vec<_> = t.objects().map(|(h, o)| (h, o.shape)).collect();
                for (h, shape) in moves {
                    let moved = match shape {
                        Shape::Sphere(s) => Shape::sphere(s.center + V::splat(offset), s.radius),
                        Shape::Box(b) => Shape::Box(Aabb {
                            min: b.min + V::splat(offset),
                            max: b.max + V::splat(offset),
                        }),
                    };
                    t.update(h, moved).expect("inside the world");
                }
            }
            let mut pairs = Vec::new();
            t.pairs(&mut pairs);
            let mut held = usize::from(check(&t, "sorted"));
            let refits = |t: &LooseOrthtree<V, u32>| t.core().grid.with_current(|g| g.refits);
            let mut followed = 0;
            for k in 1..=6 {
                // Small steps, some out of their cells: followed.
                nudge(&mut t, k, 0.02, 0.06);
                t.pairs(&mut pairs);
                followed += usize::from(refits(&t) > 0);
                held += usize::from(check(&t, "refit"));
                t.flush();
                held += usize::from(check(&t, "after the build step"));
            }
            // The lowest of the large objects (radius 6, a level of cells
            // of side 16) moves down by 1.5: below the box the grid was
            // sorted in, by more than the reach's margin beyond the
            // levels' `ext` (a sixteenth of a cell), less than a refit's
            // drift, and the refit follows it.
            let (h, low) = t
                .objects()
                .filter(|(_, o)| o.value % 17 == 0)
                .map(|(h, o)| (h, o.shape))
                .min_by(|a, b| a.1.aabb().min.get(0).total_cmp(&b.1.aabb().min.get(0)))
                .expect("objects");
            let d = V::ZERO.with(0, -1.5);
            let moved = match low {
                Shape::Sphere(s) => Shape::sphere(s.center + d, s.radius),
                Shape::Box(b) => Shape::Box(Aabb {
                    min: b.min + d,
                    max: b.max + d,
                }),
            };
            let before = refits(&t);
            t.update(h, moved).expect("inside the world");
            t.pairs(&mut pairs);
            held += usize::from(check(&t, "one object out"));
            if offset == 0.0 {
                assert!(followed > 0, "a refit happened");
                assert_eq!(refits(&t), before + 1, "the low object is followed");
            }
            held
        }
        assert_eq!(run::<Vec3>(0.0), 14, "a reach at every step");
        assert_eq!(run::<Vec2>(0.0), 14, "a reach at every step");
        run::<Vec3>(1e6);
        run::<Vec3>(3e12);
    }

    // The refit's other tests add no `unsafe` (the chunk tests' loads and
    // the small refit above run under Miri) and take minutes under Miri:
    // left out there.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn a_refit_follows_the_objects_in_3d_and_2d() {
        a_refit_follows_the_objects::<Vec3>();
        a_refit_follows_the_objects::<Vec2>();
        the_moves_keep_the_grids_copy_of_the_boxes::<Vec3>();
        the_moves_keep_the_grids_copy_of_the_boxes::<Vec2>();
        a_copy_no_refit_reads_is_dropped::<Vec3>();
        a_copy_no_refit_reads_is_dropped::<Vec2>();
    }

    /// A copy of the boxes that no refit reads (every frame's moves
    /// written where the copy is not told of them, as the phases of a
    /// large batch write them) is dropped after three builds in a row
    /// that did not read it, its memory freed, and made again only after
    /// a wait of 1, 2, 4... builds, doubling with each drop in a row; a
    /// refit that reads it again ends the doubling. The pairs are the
    /// brute force's throughout.
    fn a_copy_no_refit_reads_is_dropped<V: Vector>() {
        let mut t = scene::<V>(300);
        let copy = |t: &LooseOrthtree<V, u32>| t.core().grid.with_current(|g| g.mirror.len());
        let mut k = 0;
        // A frame of moves, one of which the copy is not told of, then a
        // build (a refit).
        let mut frame = |t: &mut LooseOrthtree<V, u32>, told: bool| {
            k += 1;
            nudge(t, k, 0.01, 0.01);
            if !told {
                let core = t.core_mut();
                let shape = core.store.obj(0).shape;
                core.store.obj_mut(0).shape = shape;
                core.grid.edit();
            }
            let refits = t.core().grid.with_current(|g| g.refits);
            both_forms_find(t);
            t.validate().expect("a valid tree, grid and copy");
            let now = t.core().grid.with_current(|g| g.refits);
            assert_eq!(now, refits + 1, "small moves are followed");
        };
        both_forms_find(&t);
        frame(&mut t, false);
        assert_eq!(copy(&t), 300, "the first refit makes the copy");
        for (round, wait) in [1, 2, 4, 1].into_iter().enumerate() {
            if round == 3 {
                // Refits that read the copy end the doubling.
                frame(&mut t, true);
                frame(&mut t, true);
            }
            for _ in 0..3 {
                assert_eq!(copy(&t), 300, "kept until three builds did not read it");
                frame(&mut t, false);
            }
            assert_eq!(
                copy(&t),
                0,
                "dropped by the third build that did not read it"
            );
            let held = t
                .core()
                .grid
                .with_current(|g| g.mirror.capacity() + g.pos_of.capacity());
            assert_eq!(held, 0, "the copy's memory is freed");
            for _ in 0..wait {
                frame(&mut t, false);
                assert_eq!(copy(&t), 0, "none made while waiting {wait} builds");
            }
            frame(&mut t, false);
            assert_eq!(copy(&t), 300, "made again after {wait} builds");
        }
    }

    /// A move of a queued object (inserted, not yet built) changes
    /// nothing the grid holds: a grid up to date stays so, and the next
    /// query searches it, finding the moved object beside it (among the
    /// queued objects, tested one by one).
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn a_queued_objects_move_leaves_the_grid_up_to_date() {
        let mut t = scene::<Vec3>(300);
        nudge(&mut t, 1, 0.01, 0.01);
        both_forms_find(&t);
        // The housekeeping step hands the grid the search left to the
        // queries.
        t.end_frame();
        let h = t
            .insert(ObjectDesc::new(Shape::sphere(Vec3::splat(7.0), 1.0), 500))
            .expect("valid");
        assert!(t.core().grid.is_fresh(), "an insertion queues the object");
        t.update(h, Shape::sphere(Vec3::splat(9.0), 1.0))
            .expect("inside the world");
        assert!(
            t.core().grid.is_fresh(),
            "a queued object's move leaves the grid up to date"
        );
        let probe = Aabb::new(Vec3::splat(8.5), Vec3::splat(9.5)).expect("valid");
        let searches = t.counters().grid_searches;
        let mut found = Vec::new();
        t.query_aabb(&probe, Filter::default(), &mut found);
        assert_eq!(
            t.counters().grid_searches,
            searches + 1,
            "the query searched the grid"
        );
        found.sort_unstable();
        let mut want: Vec<_> = t
            .objects()
            .filter(|(_, o)| o.aabb().intersects(&probe))
            .map(|(h, _)| h)
            .collect();
        want.sort_unstable();
        assert!(want.contains(&h), "the moved object is where it moved");
        assert_eq!(found, want, "the brute force's answer");
        t.validate().expect("a valid tree, grid and copy");
    }

    /// A move that evicts its object (the `Remove` policy: it left the
    /// world) changes which objects there are: the grid's copy of the
    /// boxes is then out of date, and the next build sorts anew and fills
    /// it.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn a_move_that_evicts_leaves_the_copy_out_of_date() {
        let config = crate::LooseConfig {
            world: Some(Aabb::new(Vec3::splat(-10.0), Vec3::splat(50.0)).expect("valid")),
            out_of_bounds: crate::OutOfBounds::Remove,
            ..Default::default()
        };
        let mut t = scene_in(LooseOrthtree::with_config(config).expect("valid"), 300);
        let state = copy_state::<Vec3>;
        both_forms_find(&t);
        nudge(&mut t, 1, 0.01, 0.01);
        both_forms_find(&t);
        nudge(&mut t, 2, 0.01, 0.01);
        assert_eq!(state(&t), (true, 1, 300), "the moves kept the copy");
        let (h, _) = t.objects().nth(5).expect("300 objects");
        t.update(h, Shape::sphere(Vec3::splat(400.0), 1.0))
            .expect("evicted, not refused");
        assert_eq!(t.take_evicted().len(), 1, "the object left the world");
        let at = t.core().grid.with_current(|g| g.mirror_at);
        assert_eq!(at, None, "an eviction leaves the copy out of date");
        t.validate().expect("a valid tree, grid and copy");
        both_forms_find(&t);
        assert_eq!(state(&t), (true, 0, 299), "a new sort fills the copy");
        t.validate().expect("a valid tree, grid and copy");
    }

    /// Objects queued before a sort and filed after it are not in the
    /// sorted grid: the next build sorts again, though no object was
    /// inserted or removed in between.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn objects_filed_after_a_sort_bring_a_new_sort() {
        let mut t = scene::<Vec3>(80);
        t.insert(ObjectDesc::new(Shape::sphere(Vec3::splat(7.0), 1.0), 500))
            .expect("valid");
        // Queued: the search sorts the grid without it.
        let mut pairs = Vec::new();
        t.pairs(&mut pairs);
        let sorted_n = t.core().grid.with_current(|g| g.n);
        t.flush();
        both_forms_find(&t);
        let g_n = t.core().grid.with_current(|g| g.n);
        assert_eq!(g_n, sorted_n + 1, "the filed object is in the grid");
        assert_eq!(t.core().grid.with_current(|g| g.refits), 0);
        t.validate().expect("a valid tree and grid");
    }

    /// Objects far smaller than their spacing get cells about as large as
    /// the spacing, not as their size (measured: the pair search at 1M
    /// such boxes twice as fast); the same objects in a few crowds of the
    /// same world keep the cells of their size. The pairs are the brute
    /// force's either way.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn sparse_objects_get_cells_as_large_as_their_spacing() {
        /// The finest level's cells for `n` boxes of side 0.5, about 3
        /// units apart, or in crowds (2^D boxes a fifth as wide each,
        /// about 4.6 others in a cell of side 2 in 3D, 2.1 in 2D); with
        /// `brute`, the grid's pairs checked against the brute force's.
        fn run<V: Vector>(n: usize, crowds: bool, brute: bool) -> u64 {
            let mut r = XorShift(0x51_7CC1_B727_220A);
            let mut next = move || r.next_unit();
            let side = 3.0 * (n as f32).powf(1.0 / V::DIM as f32);
            let descs = (0..n)
                .map(|i| {
                    let mut c = V::ZERO;
                    for a in 0..V::DIM {
                        let u = next();
                        c = c.with(
                            a,
                            if crowds {
                                let home = ((i >> a) & 1) as f32 * 0.8 * side;
                                home + u * side * 0.2
                            } else {
                                u * side
                            },
                        );
                    }
                    ObjectDesc::new(Shape::cuboid(c, V::splat(0.25)), i as u32)
                })
                .collect();
            let mut t = LooseOrthtree::<V, u32>::new();
            t.insert_many(descs).expect("valid objects");
            t.flush();
            if brute {
                assert!(!both_forms_find(&t).is_empty(), "a scene with pairs");
            } else {
                let mut pairs = Vec::new();
                t.pairs(&mut pairs);
                assert!(!pairs.is_empty(), "a scene with pairs");
            }
            t.validate().expect("a valid tree and grid");
            t.core().grid.with_current(|g| g.levels[0].cells())
        }
        for n in [3000, 150_000] {
            // Every object in the sample below 16,384; a drawn sample
            // above, from a list in the tree's order (where the objects of
            // one cell lie together: an evenly spaced sample of the
            // crowds found too few of them together, and made their
            // cells larger).
            let brute = n <= 3000;
            for (finest, dims) in [run::<Vec3>(n, false, brute), run::<Vec2>(n, false, brute)]
                .into_iter()
                .zip([3, 2])
            {
                assert!(
                    finest <= n as u64,
                    "{dims}D: {finest} finest cells for {n} sparse objects"
                );
            }
            for (finest, dims) in [run::<Vec3>(n, true, brute), run::<Vec2>(n, true, brute)]
                .into_iter()
                .zip([3, 2])
            {
                assert!(
                    finest > n as u64,
                    "{dims}D: {finest} finest cells for {n} crowded objects"
                );
            }
        }
    }

    /// The mixed scene, then the crowded cell.
    #[test]
    fn the_chunk_tests_find_the_brute_force_pairs_3d() {
        both_forms_agree::<Vec3>();
        a_crowded_cell_agrees::<Vec3>();
    }

    #[test]
    fn the_chunk_tests_find_the_brute_force_pairs_2d() {
        both_forms_agree::<Vec2>();
        a_crowded_cell_agrees::<Vec2>();
    }
}
