//! The op-sequence harness: a byte stream decoded (with `arbitrary`) into a
//! sequence of operations, run against every structure and the brute force
//! side by side. Any difference, panic or failed `validate()` panics.
//!
//! Shared by the `ops` fuzz target (`fuzz/fuzz_targets/ops.rs`) and by
//! sparti's test `sparti/tests/it/fuzz_replay.rs`, which replays the seed
//! corpus and every regression input on stable in `cargo test`.
//!
//! The comparisons are those of the shared suite (`sparti/tests/it/common`):
//! pair sets exactly equal (here as full contact records), region queries
//! as sorted sets of handles, rays as `(handle, distance)` in order, the
//! nearest hit with its point and normal, k-nearest as `(handle, distance)`
//! in order, contact events as handle lists. Handles are compared directly:
//! every structure and the brute force share one generational arena, so the
//! same operations give the same handles.

#![allow(clippy::too_many_lines)]

use arbitrary::{Result, Unstructured};
use sparti::glam::{Vec2, Vec3};
use sparti::{
    Aabb, BruteForce, Bsp, BspConfig, Cone, Contact, ContactEvents, Error, Filter, Frustum, Handle,
    LayerMatrix, LooseConfig, LooseOrthtree, ObjectDesc, Orthtree, OrthtreeConfig, OutOfBounds,
    Plane, Ray, Shape, SpatialIndex, Sphere, Vector,
};

/// Special values the decoder can pick: edges of sparti's range and of
/// `f32`.
const SPECIALS: [f32; 24] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-30,
    f32::MIN_POSITIVE,
    1e-45,
    1e6,
    -1e6,
    1e12,
    1e18,
    sparti::MAX_COORDINATE,
    -sparti::MAX_COORDINATE,
    1.2e18,
    1e30,
    -1e30,
    f32::MAX,
    f32::MIN,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    16777216.0,
    0.1,
];

/// A number: mostly small (halves, 1/256ths), sometimes special, rarely raw
/// bits.
fn num(u: &mut Unstructured) -> Result<f32> {
    let tag: u8 = u.arbitrary()?;
    Ok(match tag {
        0..=143 => f32::from(u.arbitrary::<i8>()?) * 0.5,
        144..=207 => f32::from(u.arbitrary::<i16>()?) / 256.0,
        208..=243 => SPECIALS[usize::from(u.arbitrary::<u8>()?) % SPECIALS.len()],
        _ => f32::from_bits(u.arbitrary::<u32>()?),
    })
}

/// A size: usually `>= 0`.
fn size(u: &mut Unstructured) -> Result<f32> {
    let s = num(u)?;
    Ok(if u.arbitrary::<u8>()? < 240 {
        s.abs()
    } else {
        s
    })
}

fn triple(u: &mut Unstructured) -> Result<[f32; 3]> {
    Ok([num(u)?, num(u)?, num(u)?])
}

fn size3(u: &mut Unstructured) -> Result<[f32; 3]> {
    Ok([size(u)?, size(u)?, size(u)?])
}

/// The first `V::DIM` components of `a`.
pub fn vec<V: Vector>(a: [f32; 3]) -> V {
    (0..V::DIM).fold(V::ZERO, |v, i| v.with(i, a[i]))
}

/// A shape as decoded, made 2D or 3D when run.
#[derive(Clone, Copy, Debug)]
pub enum RawShape {
    /// Centre and radius.
    Sphere([f32; 3], f32),
    /// Centre and half extents.
    Cuboid([f32; 3], [f32; 3]),
    /// `min` and `max` given directly (may be inverted).
    Box([f32; 3], [f32; 3]),
}

impl RawShape {
    fn decode(u: &mut Unstructured) -> Result<Self> {
        Ok(match u.arbitrary::<u8>()? % 8 {
            0..=3 => RawShape::Sphere(triple(u)?, size(u)?),
            4..=6 => RawShape::Cuboid(triple(u)?, size3(u)?),
            _ => RawShape::Box(triple(u)?, triple(u)?),
        })
    }

    /// The shape in `V`.
    pub fn shape<V: Vector>(&self) -> Shape<V> {
        match *self {
            RawShape::Sphere(c, r) => Shape::sphere(vec::<V>(c), r),
            RawShape::Cuboid(c, h) => Shape::cuboid(vec::<V>(c), vec::<V>(h)),
            RawShape::Box(a, b) => Shape::Box(Aabb {
                min: vec(a),
                max: vec(b),
            }),
        }
    }
}

/// An object to insert.
#[derive(Clone, Copy, Debug)]
pub struct RawObject {
    /// Its shape.
    pub shape: RawShape,
    /// Layer bits.
    pub layer: u32,
    /// Mask bits.
    pub mask: u32,
    /// Static flag.
    pub is_static: bool,
}

impl RawObject {
    fn decode(u: &mut Unstructured) -> Result<Self> {
        let shape = RawShape::decode(u)?;
        let l: u8 = u.arbitrary()?;
        let layer = if l >= 250 { 0 } else { 1 << (l % 5) };
        let m: u8 = u.arbitrary()?;
        let mask = if m >= 128 {
            u32::MAX
        } else {
            u32::from(m & 0x1F)
        };
        let is_static = u.arbitrary::<u8>()? < 64;
        Ok(Self {
            shape,
            layer,
            mask,
            is_static,
        })
    }
}

/// One operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// Insert one object.
    Insert(RawObject),
    /// Insert a batch (all or nothing).
    InsertMany(Vec<RawObject>),
    /// Give an object (picked among every handle ever issued, stale ones
    /// included) a new shape.
    Update(u16, RawShape),
    /// Move an object by a small step (`d / 4`).
    Nudge(u16, [i8; 3]),
    /// Remove an object (stale handles included).
    Remove(u16),
    /// Change an object's value through `value_mut`.
    Value(u16),
    /// Remove everything.
    Clear,
    /// Build the queued insertions.
    Flush,
    /// `end_frame` this many times (prunes idle branches).
    EndFrame(u8),
    /// A frame step: contacts compared, contact events compared, `end_frame`.
    Step,
    /// Set one entry of the layer matrix (layers 0..5).
    SetMatrix(u8, u8, bool),
    /// Box query (`min`, `max`).
    QueryBox([f32; 3], [f32; 3], u8),
    /// Sphere query.
    QuerySphere([f32; 3], f32, u8),
    /// Radius query (any radius: NaN and negative find nothing).
    QueryRadius([f32; 3], f32, u8),
    /// Frustum: six planes from normals and offsets.
    QueryFrustum([[f32; 4]; 6], u8),
    /// Frustum: an axis-aligned box of planes around a centre.
    QueryFrustumBox([f32; 3], [f32; 3], u8),
    /// View cone: apex, direction, half-angle, range.
    QueryCone([f32; 3], [f32; 3], f32, f32, u8),
    /// Ray: origin, direction, max distance; all hits and the nearest.
    Ray([f32; 3], [f32; 3], f32, u8),
    /// k nearest to a point.
    Knn([f32; 3], u8, u8),
    /// `update_many`: a batch of moves (stale and repeated handles
    /// included), each a small step or any new shape.
    UpdateMany(Vec<(u16, RawMove)>),
}

/// One move of an `update_many` batch.
#[derive(Clone, Copy, Debug)]
pub enum RawMove {
    /// A small step from the current shape (as `Nudge`).
    Nudge([i8; 3]),
    /// Any new shape.
    To(RawShape),
}

impl Op {
    fn decode(u: &mut Unstructured) -> Result<Self> {
        let tag: u8 = u.arbitrary()?;
        // Raw tags 220..=223 and 252..=255 (formerly rays or k nearest,
        // which keep their other tags) are the batch update.
        if matches!(tag, 220..=223 | 252..=255) {
            let n = u.int_in_range(0..=10u8)?;
            let mut v = Vec::new();
            for _ in 0..n {
                let i: u16 = u.arbitrary()?;
                let m = if u.arbitrary::<u8>()? < 160 {
                    RawMove::Nudge(u.arbitrary()?)
                } else {
                    RawMove::To(RawShape::decode(u)?)
                };
                v.push((i, m));
            }
            return Ok(Op::UpdateMany(v));
        }
        Ok(match tag % 32 {
            0..=6 => Op::Insert(RawObject::decode(u)?),
            7 => {
                let n = u.int_in_range(0..=12u8)?;
                let mut v = Vec::new();
                for _ in 0..n {
                    v.push(RawObject::decode(u)?);
                }
                Op::InsertMany(v)
            }
            8 | 9 => Op::Update(u.arbitrary()?, RawShape::decode(u)?),
            10..=13 => Op::Nudge(u.arbitrary()?, u.arbitrary()?),
            14 | 15 => Op::Remove(u.arbitrary()?),
            16 => Op::Value(u.arbitrary()?),
            17 => {
                // Rare: a clear wipes out the state the fuzzer built.
                if u.arbitrary::<u8>()? < 16 {
                    Op::Clear
                } else {
                    Op::Flush
                }
            }
            18 => Op::EndFrame(u.int_in_range(1..=80u8)?),
            19 | 20 => Op::Step,
            21 => Op::SetMatrix(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?),
            22 => Op::QueryBox(triple(u)?, triple(u)?, u.arbitrary()?),
            23 => Op::QuerySphere(triple(u)?, size(u)?, u.arbitrary()?),
            24 => Op::QueryRadius(triple(u)?, size(u)?, u.arbitrary()?),
            25 => {
                let mut p = [[0.0; 4]; 6];
                for plane in &mut p {
                    *plane = [num(u)?, num(u)?, num(u)?, num(u)?];
                }
                Op::QueryFrustum(p, u.arbitrary()?)
            }
            26 => Op::QueryFrustumBox(triple(u)?, size3(u)?, u.arbitrary()?),
            27 => Op::QueryCone(triple(u)?, triple(u)?, size(u)?, size(u)?, u.arbitrary()?),
            28 | 29 => Op::Ray(triple(u)?, triple(u)?, size(u)?, u.arbitrary()?),
            _ => Op::Knn(triple(u)?, u.arbitrary()?, u.arbitrary()?),
        })
    }
}

/// A decoded input: the configuration byte and the operations.
#[derive(Clone, Debug)]
pub struct Input {
    /// Picks each structure's configuration.
    pub config: u8,
    /// The operations, at most [`MAX_OPS`].
    pub ops: Vec<Op>,
}

/// The longest operation sequence decoded.
pub const MAX_OPS: usize = 256;

impl Input {
    /// Decodes bytes (never fails: missing bytes read as zeros).
    pub fn decode(data: &[u8]) -> Self {
        let mut u = Unstructured::new(data);
        let config = u.arbitrary().unwrap_or(0);
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            match Op::decode(&mut u) {
                Ok(op) => ops.push(op),
                Err(_) => break,
            }
        }
        Self { config, ops }
    }
}

fn filter(f: u8) -> Filter {
    match f {
        0..=127 => Filter::ALL,
        128 => Filter::layers(0),
        _ => Filter::layers(u32::from(f & 0x1F)),
    }
}

/// What every structure under test offers beyond the trait: the evictions
/// of the `Remove` policy.
pub trait Subject<V: Vector>: SpatialIndex<V, u32> {
    /// Objects the structure removed because they left the world.
    fn evicted(&mut self) -> Vec<(Handle, u32)>;
}

impl<V: Vector> Subject<V> for Orthtree<V, u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}
impl<V: Vector> Subject<V> for LooseOrthtree<V, u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}
impl<V: Vector> Subject<V> for Bsp<V, u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}

/// A structure and the brute force, driven together.
struct Pair2<V: Vector, S> {
    name: String,
    s: S,
    b: BruteForce<V, u32>,
    /// Whether the structure may refuse objects outside its world.
    may_refuse: bool,
    handles: Vec<Handle>,
    next_value: u32,
    ev_s: ContactEvents,
    ev_b: ContactEvents,
    matrix: LayerMatrix,
}

fn sorted(mut v: Vec<Handle>) -> Vec<Handle> {
    v.sort_unstable();
    v
}

impl<V: Vector, S: Subject<V>> Pair2<V, S> {
    fn pick(&self, i: u16) -> Option<Handle> {
        (!self.handles.is_empty()).then(|| self.handles[usize::from(i) % self.handles.len()])
    }

    fn fail(&self, step: usize, op: &Op, what: &str) -> ! {
        panic!("[{}] op {step} {op:?}: {what}", self.name)
    }

    /// After a mutation: evictions mirrored, invariants, same objects.
    fn settle(&mut self, step: usize, op: &Op) {
        for (h, v) in self.s.evicted() {
            match self.b.remove(h) {
                Ok(bv) if bv == v => {}
                r => self.fail(
                    step,
                    op,
                    &format!("evicted {h:?}/{v} but brute force: {r:?}"),
                ),
            }
        }
        if let Err(e) = self.s.validate() {
            self.fail(step, op, &format!("validate(): {e}"));
        }
        if self.s.len() != self.b.len() {
            self.fail(
                step,
                op,
                &format!("len {} vs brute force {}", self.s.len(), self.b.len()),
            );
        }
        let so = self.s.objects().map(|(h, o)| (h, o.shape, o.value));
        let bo = self.b.objects().map(|(h, o)| (h, o.shape, o.value));
        if !so.eq(bo) {
            self.fail(step, op, "objects() differ from the brute force's");
        }
        if self.s.stats().objects != self.s.len() {
            self.fail(step, op, "stats().objects != len()");
        }
    }

    /// Compares the outcome of an insertion-like operation.
    fn same_result<R: PartialEq + core::fmt::Debug>(
        &self,
        step: usize,
        op: &Op,
        rs: &core::result::Result<R, Error>,
        rb: &core::result::Result<R, Error>,
    ) {
        if rs != rb {
            self.fail(step, op, &format!("{rs:?} vs brute force {rb:?}"));
        }
    }

    fn insert_desc(&self, o: &RawObject, value: u32) -> ObjectDesc<V, u32> {
        ObjectDesc::new(o.shape.shape::<V>(), value)
            .with_layer(o.layer)
            .with_mask(o.mask)
            .with_static(o.is_static)
    }

    /// The task-parallel pair search against the one-thread one: same
    /// pairs and contact records in the same order, same counters; and the
    /// pairs against the brute force's.
    fn par_search(&mut self, step: usize, op: &Op) {
        let (mut p1, mut pp, mut pb) = (Vec::new(), Vec::new(), Vec::new());
        self.s.reset_counters();
        self.s.pairs(&mut p1);
        let c1 = self.s.counters();
        self.s.reset_counters();
        self.s.par_pairs(&mut pp);
        let cp = self.s.counters();
        if p1 != pp {
            self.fail(step, op, &format!("par_pairs {pp:?} vs pairs {p1:?}"));
        }
        if c1 != cp {
            self.fail(
                step,
                op,
                &format!("par_pairs counters {cp:?} vs pairs {c1:?}"),
            );
        }
        self.b.par_pairs(&mut pb);
        let key = |p: &sparti::Pair| (p.a, p.b);
        let mut ks: Vec<_> = pp.iter().map(key).collect();
        let mut kb: Vec<_> = pb.iter().map(key).collect();
        ks.sort_unstable();
        kb.sort_unstable();
        if ks != kb {
            self.fail(step, op, &format!("par_pairs {ks:?} vs brute force {kb:?}"));
        }
        let (mut c1, mut cp): (Vec<Contact<V>>, Vec<Contact<V>>) = (Vec::new(), Vec::new());
        self.s.contacts(&mut c1);
        self.s.par_contacts(&mut cp);
        let ckey = |c: &Contact<V>| {
            (
                c.a,
                c.b,
                c.point.to_array_bits(),
                c.normal.to_array_bits(),
                c.depth.to_bits(),
            )
        };
        if !c1.iter().map(ckey).eq(cp.iter().map(ckey)) {
            self.fail(step, op, &format!("par_contacts {cp:?} vs contacts {c1:?}"));
        }
    }

    fn contacts(&mut self, step: usize, op: &Op) {
        self.par_search(step, op);
        let (mut cs, mut cb): (Vec<Contact<V>>, Vec<Contact<V>>) = (Vec::new(), Vec::new());
        self.s.par_contacts(&mut cs);
        self.b.contacts(&mut cb);
        let key = |c: &Contact<V>| (c.a, c.b);
        cs.sort_by_key(key);
        cb.sort_by_key(key);
        if cs.windows(2).any(|w| key(&w[0]) == key(&w[1])) {
            self.fail(step, op, "a pair reported twice");
        }
        if cs.len() != cb.len() || cs.iter().zip(&cb).any(|(x, y)| key(x) != key(y)) {
            let ks: Vec<_> = cs.iter().map(key).collect();
            let kb: Vec<_> = cb.iter().map(key).collect();
            let missing: Vec<_> = kb.iter().filter(|x| !ks.contains(x)).take(4).collect();
            let extra: Vec<_> = ks.iter().filter(|x| !kb.contains(x)).take(4).collect();
            self.fail(
                step,
                op,
                &format!(
                    "{} pairs vs brute force {}: missing {missing:?}, extra {extra:?}",
                    ks.len(),
                    kb.len()
                ),
            );
        }
        for (x, y) in cs.iter().zip(&cb) {
            let same = x.point.to_array_bits() == y.point.to_array_bits()
                && x.normal.to_array_bits() == y.normal.to_array_bits()
                && x.depth.to_bits() == y.depth.to_bits();
            if !same {
                self.fail(step, op, &format!("contact {x:?} vs brute force {y:?}"));
            }
            if x.a >= x.b {
                self.fail(step, op, &format!("pair not ordered: {x:?}"));
            }
        }
    }

    fn run_op(&mut self, step: usize, op: &Op) {
        match op {
            Op::Insert(o) => {
                let v = self.next_value;
                self.next_value += 1;
                let rs = self.s.insert(self.insert_desc(o, v));
                if rs == Err(Error::OutsideWorld) && self.may_refuse {
                    return self.settle(step, op);
                }
                let rb = self.b.insert(self.insert_desc(o, v));
                self.same_result(step, op, &rs, &rb);
                if let Ok(h) = rs {
                    self.handles.push(h);
                }
                self.settle(step, op);
            }
            Op::InsertMany(objs) => {
                let descs: Vec<_> = objs
                    .iter()
                    .enumerate()
                    .map(|(i, o)| self.insert_desc(o, self.next_value + i as u32))
                    .collect();
                self.next_value += objs.len() as u32;
                let rs = self.s.insert_many(descs.clone());
                if rs == Err(Error::OutsideWorld) && self.may_refuse {
                    return self.settle(step, op);
                }
                let rb = self.b.insert_many(descs);
                self.same_result(step, op, &rs, &rb);
                if let Ok(hs) = rs {
                    self.handles.extend(hs);
                }
                self.settle(step, op);
            }
            Op::Update(i, shape) => {
                let Some(h) = self.pick(*i) else { return };
                self.update(step, op, h, shape.shape::<V>());
            }
            Op::Nudge(i, d) => {
                let Some(h) = self.pick(*i) else { return };
                let shape = self.nudged(h, *d);
                self.update(step, op, h, shape);
            }
            Op::UpdateMany(moves) => {
                if self.handles.is_empty() {
                    return;
                }
                let moves: Vec<(Handle, Shape<V>)> = moves
                    .iter()
                    .map(|(i, m)| {
                        let h = self.pick(*i).expect("handles");
                        let shape = match m {
                            RawMove::Nudge(d) => self.nudged(h, *d),
                            RawMove::To(s) => s.shape::<V>(),
                        };
                        (h, shape)
                    })
                    .collect();
                let before: Vec<_> = self
                    .s
                    .objects()
                    .map(|(h, o)| (h, o.shape, o.value))
                    .collect();
                let rs = self.s.update_many(&moves);
                if rs.is_err() {
                    // All or nothing: an error changes nothing.
                    let after: Vec<_> = self
                        .s
                        .objects()
                        .map(|(h, o)| (h, o.shape, o.value))
                        .collect();
                    let shapes_eq = before.len() == after.len()
                        && before.iter().zip(&after).all(|(x, y)| {
                            x.0 == y.0 && x.2 == y.2 && shape_bits(&x.1) == shape_bits(&y.1)
                        });
                    if !shapes_eq {
                        self.fail(
                            step,
                            op,
                            &format!("update_many failed ({rs:?}) but changed objects"),
                        );
                    }
                }
                if rs == Err(Error::OutsideWorld) && self.may_refuse {
                    return self.settle(step, op);
                }
                let rb = self.b.update_many(&moves);
                self.same_result(step, op, &rs, &rb);
                self.settle(step, op);
            }
            Op::Remove(i) => {
                let Some(h) = self.pick(*i) else { return };
                let rs = self.s.remove(h);
                let rb = self.b.remove(h);
                self.same_result(step, op, &rs, &rb);
                if self.s.get(h) != Err(Error::StaleHandle(h)) {
                    self.fail(step, op, "a removed handle still answers");
                }
                self.settle(step, op);
            }
            Op::Value(i) => {
                let Some(h) = self.pick(*i) else { return };
                let v = self.next_value;
                self.next_value += 1;
                let rs = self.s.value_mut(h).map(|x| {
                    *x = v;
                });
                let rb = self.b.value_mut(h).map(|x| {
                    *x = v;
                });
                self.same_result(step, op, &rs, &rb);
                self.settle(step, op);
            }
            Op::Clear => {
                self.s.clear();
                self.b.clear();
                self.settle(step, op);
            }
            Op::Flush => {
                self.s.flush();
                self.settle(step, op);
            }
            Op::EndFrame(n) => {
                for _ in 0..*n {
                    self.s.end_frame();
                    self.b.end_frame();
                }
                self.settle(step, op);
            }
            Op::Step => {
                self.contacts(step, op);
                self.ev_s.update(&self.s);
                self.ev_b.update(&self.b);
                if self.ev_s.started() != self.ev_b.started()
                    || self.ev_s.stopped() != self.ev_b.stopped()
                {
                    self.fail(
                        step,
                        op,
                        &format!(
                            "events started {:?} stopped {:?} vs brute force {:?} {:?}",
                            self.ev_s.started(),
                            self.ev_s.stopped(),
                            self.ev_b.started(),
                            self.ev_b.stopped()
                        ),
                    );
                }
                self.s.end_frame();
                self.b.end_frame();
                self.settle(step, op);
            }
            Op::SetMatrix(a, b, on) => {
                self.matrix.set(u32::from(a % 5), u32::from(b % 5), *on);
                self.s.set_layer_matrix(self.matrix);
                self.b.set_layer_matrix(self.matrix);
                if self.s.layer_matrix() != &self.matrix {
                    self.fail(step, op, "layer matrix not kept");
                }
            }
            Op::QueryBox(a, b, f) => {
                if let Ok(bx) = Aabb::new(vec::<V>(*a), vec::<V>(*b)) {
                    self.region(step, op, &bx, *f);
                }
            }
            Op::QuerySphere(c, r, f) => {
                if let Ok(s) = Sphere::new(vec::<V>(*c), *r) {
                    self.region(step, op, &s, *f);
                }
            }
            Op::QueryRadius(c, r, f) => {
                let (mut hs, mut hb) = (Vec::new(), Vec::new());
                self.s.query_radius(vec::<V>(*c), *r, filter(*f), &mut hs);
                self.b.query_radius(vec::<V>(*c), *r, filter(*f), &mut hb);
                let (hs, hb) = (sorted(hs), sorted(hb));
                if hs != hb {
                    self.fail(
                        step,
                        op,
                        &format!("radius query {hs:?} vs brute force {hb:?}"),
                    );
                }
            }
            Op::QueryFrustum(p, f) => {
                let planes: core::result::Result<Vec<Plane<V>>, Error> = p
                    .iter()
                    .map(|q| Plane::new(vec::<V>([q[0], q[1], q[2]]), q[3]))
                    .collect();
                if let Ok(planes) = planes {
                    let fr = Frustum::new(core::array::from_fn(|i| planes[i]));
                    self.region(step, op, &fr, *f);
                }
            }
            Op::QueryFrustumBox(c, h, f) => {
                let (c, h) = (vec::<V>(*c), vec::<V>(*h));
                let mut planes = Vec::new();
                for i in 0..6 {
                    let axis = i % V::DIM;
                    let n = V::ZERO.with(axis, if i % 2 == 0 { 1.0 } else { -1.0 });
                    // Inside: |p - c| <= h along the axis.
                    let d = h.get(axis) - n.dot(c);
                    match Plane::new(n, d) {
                        Ok(p) => planes.push(p),
                        Err(_) => return,
                    }
                }
                let fr = Frustum::new(core::array::from_fn(|i| planes[i]));
                self.region(step, op, &fr, *f);
            }
            Op::QueryCone(a, d, angle, range, f) => {
                if let Ok(c) = Cone::new(vec::<V>(*a), vec::<V>(*d), *angle, *range) {
                    self.region(step, op, &c, *f);
                }
            }
            Op::Ray(o, d, max, f) => {
                let Ok(ray) = Ray::new(vec::<V>(*o), vec::<V>(*d)) else {
                    return;
                };
                let (mut hs, mut hb) = (Vec::new(), Vec::new());
                self.s.ray_all(&ray, *max, filter(*f), &mut hs);
                self.b.ray_all(&ray, *max, filter(*f), &mut hb);
                let key = |h: &sparti::RayHit<V>| (h.handle, h.distance.to_bits());
                if !hs.iter().map(key).eq(hb.iter().map(key)) {
                    self.fail(step, op, &format!("ray_all {hs:?} vs brute force {hb:?}"));
                }
                let ns = self.s.ray_nearest(&ray, *max, filter(*f));
                let nb = self.b.ray_nearest(&ray, *max, filter(*f));
                let key = |h: &sparti::RayHit<V>| {
                    (
                        h.handle,
                        h.distance.to_bits(),
                        h.point.to_array_bits(),
                        h.normal.to_array_bits(),
                    )
                };
                if ns.as_ref().map(key) != nb.as_ref().map(key) {
                    self.fail(
                        step,
                        op,
                        &format!("ray_nearest {ns:?} vs brute force {nb:?}"),
                    );
                }
                if nb.map(|h| h.distance.to_bits()) != hb.first().map(|h| h.distance.to_bits()) {
                    self.fail(step, op, "the nearest hit is not the first of all hits");
                }
            }
            Op::Knn(p, k, f) => {
                let k = usize::from(*k);
                let (mut ks, mut kb) = (Vec::new(), Vec::new());
                self.s.nearest_k(vec::<V>(*p), k, filter(*f), &mut ks);
                self.b.nearest_k(vec::<V>(*p), k, filter(*f), &mut kb);
                let key = |n: &sparti::Neighbor| (n.handle, n.distance.to_bits());
                if !ks.iter().map(key).eq(kb.iter().map(key)) {
                    self.fail(step, op, &format!("nearest_k {ks:?} vs brute force {kb:?}"));
                }
                if kb.len() > k {
                    self.fail(step, op, "more than k neighbours");
                }
            }
        }
    }

    fn nudged(&self, h: Handle, d: [i8; 3]) -> Shape<V> {
        let d: V = vec::<V>([f32::from(d[0]), f32::from(d[1]), f32::from(d[2])]) * 0.25f32;
        match self.b.get(h) {
            Ok(o) => match o.shape {
                Shape::Sphere(s) => Shape::sphere(s.center + d, s.radius),
                Shape::Box(b) => Shape::Box(Aabb {
                    min: b.min + d,
                    max: b.max + d,
                }),
            },
            Err(_) => Shape::sphere(d, 1.0),
        }
    }

    fn update(&mut self, step: usize, op: &Op, h: Handle, shape: Shape<V>) {
        let rs = self.s.update(h, shape);
        if rs == Err(Error::OutsideWorld) && self.may_refuse {
            return self.settle(step, op);
        }
        let rb = self.b.update(h, shape);
        self.same_result(step, op, &rs, &rb);
        self.settle(step, op);
    }

    fn region<R: sparti::Region<V>>(&mut self, step: usize, op: &Op, r: &R, f: u8) {
        let (mut os, mut ob) = (Vec::new(), Vec::new());
        self.s.query(r, filter(f), &mut os);
        self.b.query(r, filter(f), &mut ob);
        let (os, ob) = (sorted(os), sorted(ob));
        if os != ob {
            self.fail(step, op, &format!("query {os:?} vs brute force {ob:?}"));
        }
    }
}

/// Bits of a shape.
fn shape_bits<V: Vector>(s: &Shape<V>) -> (bool, [u32; 3], [u32; 3], u32) {
    match s {
        Shape::Sphere(s) => (true, s.center.to_array_bits(), [0; 3], s.radius.to_bits()),
        Shape::Box(b) => (false, b.min.to_array_bits(), b.max.to_array_bits(), 0),
    }
}

/// Bits of a vector, so that `-0.0 != 0.0` and NaN equals itself.
trait Bits {
    fn to_array_bits(&self) -> [u32; 3];
}

impl<V: Vector> Bits for V {
    fn to_array_bits(&self) -> [u32; 3] {
        let mut a = [0; 3];
        for (i, x) in a.iter_mut().enumerate().take(V::DIM) {
            *x = self.get(i).to_bits();
        }
        a
    }
}

fn run_pair<V: Vector, S: Subject<V>>(name: String, s: S, may_refuse: bool, ops: &[Op]) {
    let mut p = Pair2 {
        name,
        s,
        b: BruteForce::new(),
        may_refuse,
        handles: Vec::new(),
        next_value: 0,
        ev_s: ContactEvents::new(),
        ev_b: ContactEvents::new(),
        matrix: LayerMatrix::ALL,
    };
    for (step, op) in ops.iter().enumerate() {
        p.run_op(step, op);
    }
    // A last frame step: pairs and events agree at the end too.
    p.run_op(ops.len(), &Op::Step);
}

/// The preset world of configurations that have one: `[-8, 8]` on every
/// axis.
fn world<V: Vector>() -> Aabb<V> {
    Aabb::new(V::splat(-8.0), V::splat(8.0)).expect("valid")
}

fn policy(c: u8) -> OutOfBounds {
    match c % 3 {
        0 => OutOfBounds::Grow,
        1 => OutOfBounds::Reject,
        _ => OutOfBounds::Remove,
    }
}

fn orthtree<V: Vector>(c: u8) -> (Orthtree<V, u32>, bool, String) {
    let config = OrthtreeConfig {
        world: (c & 0x10 != 0).then(world::<V>),
        min_node_size: [1.0, 0.25, 4.0, 1.0][usize::from(c & 3)],
        out_of_bounds: policy(c >> 5),
    };
    let name = format!("Orthtree{}D {config:?}", V::DIM);
    let t = Orthtree::with_config(config).expect("valid config");
    (t, config.out_of_bounds != OutOfBounds::Grow, name)
}

fn loose<V: Vector>(c: u8) -> (LooseOrthtree<V, u32>, bool, String) {
    let config = LooseConfig {
        world: (c & 0x10 != 0).then(world::<V>),
        min_node_size: [1.0, 0.5][usize::from(c & 1)],
        looseness: [2.0, 1.5, 3.0, 2.0][usize::from((c >> 1) & 3)],
        out_of_bounds: policy(c >> 5),
        leaf_capacity: [0, 1, 4, 0][usize::from((c >> 3) & 1) * 2 + usize::from(c >> 7)],
    };
    let name = format!("LooseOrthtree{}D {config:?}", V::DIM);
    let t = LooseOrthtree::with_config(config).expect("valid config");
    (t, config.out_of_bounds != OutOfBounds::Grow, name)
}

fn bsp<V: Vector>(c: u8) -> (Bsp<V, u32>, bool, String) {
    let config = BspConfig {
        world: (c & 0x10 != 0).then(world::<V>),
        min_dimension: [1.0, 0.25, 4.0, 1.0][usize::from(c & 3)],
        leaf_capacity: [1, 0, 3, 1][usize::from((c >> 2) & 3)],
        out_of_bounds: policy(c >> 5),
    };
    let name = format!("Bsp{}D {config:?}", V::DIM);
    let t = Bsp::with_config(config).expect("valid config");
    (t, config.out_of_bounds != OutOfBounds::Grow, name)
}

/// Runs one input through all six structures (octree, quadtree, loose
/// octree, loose quadtree, BSP 3D and 2D), each beside the brute force.
/// Panics at the first difference.
pub fn run(data: &[u8]) {
    let input = Input::decode(data);
    run_input(&input);
}

/// Runs a decoded input through all six structures.
pub fn run_input(input: &Input) {
    let c = input.config;
    let ops = &input.ops;
    let (s, r, n) = orthtree::<Vec3>(c);
    run_pair(n, s, r, ops);
    let (s, r, n) = orthtree::<Vec2>(c);
    run_pair(n, s, r, ops);
    let (s, r, n) = loose::<Vec3>(c);
    run_pair(n, s, r, ops);
    let (s, r, n) = loose::<Vec2>(c);
    run_pair(n, s, r, ops);
    let (s, r, n) = bsp::<Vec3>(c);
    run_pair(n, s, r, ops);
    let (s, r, n) = bsp::<Vec2>(c);
    run_pair(n, s, r, ops);
}
