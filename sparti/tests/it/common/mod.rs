//! The shared test suite: seeded scenes run through any structure and the
//! brute force side by side, compared after every frame, with `validate()`
//! after every mutation.

#![allow(dead_code)]

use std::collections::BTreeSet;

use rand::Rng;
use sparti::{
    Aabb, BruteForce, Cone, ContactEvents, Filter, Frustum, Handle, LayerMatrix, Neighbor,
    ObjectDesc, Pair, Plane, Ray, Shape, SpatialIndex, Sphere, Vector,
};

/// The scene kit's generator and helpers (`sparti-scenes`).
pub use sparti_scenes::{Rng as Rng64, direction as unit, in_cube, rng, vec_in};

/// Calls the generic check `$f` with every tree, each empty, in 3D and 2D
/// (and, with `brute,` first, the brute force in 3D and 2D before them).
/// With `makers` first, `$f` gets each structure's constructor instead
/// (`Octree::<u32>::new`), for checks that make several of one kind.
macro_rules! every_structure {
    (brute, $f:ident) => {
        $crate::common::every_structure!(@brute $f, ());
        $crate::common::every_structure!(@trees $f, ());
    };
    ($f:ident) => {
        $crate::common::every_structure!(@trees $f, ());
    };
    (makers brute, $f:ident) => {
        $crate::common::every_structure!(@brute $f,);
        $crate::common::every_structure!(@trees $f,);
    };
    (makers, $f:ident) => {
        $crate::common::every_structure!(@trees $f,);
    };
    (@brute $f:ident, $($call:tt)?) => {
        $f(::sparti::BruteForce::<::glam::Vec3, u32>::new $($call)?);
        $f(::sparti::BruteForce::<::glam::Vec2, u32>::new $($call)?);
    };
    (@trees $f:ident, $($call:tt)?) => {
        $f(::sparti::Octree::<u32>::new $($call)?);
        $f(::sparti::Quadtree::<u32>::new $($call)?);
        $f(::sparti::LooseOctree::<u32>::new $($call)?);
        $f(::sparti::LooseQuadtree::<u32>::new $($call)?);
        $f(::sparti::Bsp3::<u32>::new $($call)?);
        $f(::sparti::Bsp2::<u32>::new $($call)?);
    };
}
pub(crate) use every_structure;

/// How a scene places and moves its objects.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Centres uniform in the world.
    Uniform,
    /// Centres around a few cluster centres.
    Clustered,
    /// Every object at the same point.
    OnePoint,
}

/// A scene recipe.
#[derive(Clone, Debug)]
pub struct Scene<V: Vector> {
    pub name: &'static str,
    pub seed: u64,
    pub objects: usize,
    pub frames: usize,
    pub world_min: V,
    pub world_max: V,
    pub layout: Layout,
    /// Radius (or half extent) range of ordinary objects.
    pub size: (f32, f32),
    /// Share of objects that are huge (size `huge`).
    pub huge_share: f64,
    pub huge: f32,
    /// Share of zero-size objects.
    pub zero_share: f64,
    /// Share of static objects.
    pub static_share: f64,
    /// Largest speed per frame.
    pub speed: f32,
    /// Objects removed and as many inserted per frame, as a share.
    pub churn: f64,
    /// Random layers and masks.
    pub layers: bool,
    /// A layer matrix set on both structures.
    pub matrix: Option<LayerMatrix>,
    /// Moving objects bounce off the world's walls (else they leave it).
    pub bounce: bool,
    /// Run `validate()` after every mutation (else once per frame).
    pub validate_each: bool,
    /// Queries of each kind per frame.
    pub queries: usize,
}

impl<V: Vector> Scene<V> {
    pub fn new(name: &'static str, seed: u64, extent: V) -> Self {
        Self {
            name,
            seed,
            objects: 150,
            frames: 12,
            world_min: V::ZERO,
            world_max: extent,
            layout: Layout::Uniform,
            size: (0.2, 3.0),
            huge_share: 0.0,
            huge: 0.0,
            zero_share: 0.0,
            static_share: 0.0,
            speed: 1.0,
            churn: 0.0,
            layers: false,
            matrix: None,
            bounce: true,
            validate_each: true,
            queries: 6,
        }
    }
}

/// One object of the scene, as the test sees it.
#[derive(Clone, Debug)]
struct Body<V: Vector> {
    id: u32,
    shape: Shape<V>,
    vel: V,
    is_static: bool,
    layer: u32,
    mask: u32,
}

fn random_shape<V: Vector>(s: &Scene<V>, r: &mut Rng64, center: V) -> Shape<V> {
    let size = if r.random_bool(s.zero_share) {
        0.0
    } else if r.random_bool(s.huge_share) {
        s.huge
    } else {
        r.random_range(s.size.0..=s.size.1)
    };
    if r.random_bool(0.5) {
        Shape::sphere(center, size)
    } else {
        // A box, sometimes flat along one axis.
        let mut half: V = vec_in(r, V::splat(size * 0.3), V::splat(size + f32::EPSILON));
        if size == 0.0 {
            half = V::ZERO;
        } else if r.random_bool(0.2) {
            half = half.with(r.random_range(0..V::DIM), 0.0);
        }
        Shape::cuboid(center, half)
    }
}

fn random_center<V: Vector>(s: &Scene<V>, r: &mut Rng64, clusters: &[V]) -> V {
    match s.layout {
        Layout::Uniform => vec_in(r, s.world_min, s.world_max),
        Layout::OnePoint => (s.world_min + s.world_max) * 0.5,
        Layout::Clustered => {
            let c = clusters[r.random_range(0..clusters.len())];
            let spread = (s.world_max - s.world_min) * 0.03;
            let p = c + vec_in(r, -spread, spread);
            p.max(s.world_min).min(s.world_max)
        }
    }
}

fn random_body<V: Vector>(s: &Scene<V>, r: &mut Rng64, id: u32, clusters: &[V]) -> Body<V> {
    let center = random_center(s, r, clusters);
    let shape = random_shape(s, r, center);
    let is_static = r.random_bool(s.static_share);
    let vel = if is_static {
        V::ZERO
    } else {
        unit::<V>(r) * r.random_range(0.0..=s.speed)
    };
    let (layer, mask) = if s.layers {
        // One object in five on no layer: no filter keeps it, not even
        // `Filter::ALL` (which queries may otherwise answer without
        // reading the objects).
        let layer = match r.random_range(0..5) {
            4 => 0,
            k => 1 << k,
        };
        (layer, r.random_range(0..16u32) | 1)
    } else {
        (1, u32::MAX)
    };
    Body {
        id,
        shape,
        vel,
        is_static,
        layer,
        mask,
    }
}

fn desc<V: Vector>(b: &Body<V>) -> ObjectDesc<V, u32> {
    ObjectDesc::new(b.shape, b.id)
        .with_layer(b.layer)
        .with_mask(b.mask)
        .with_static(b.is_static)
}

fn moved<V: Vector>(s: &Scene<V>, b: &mut Body<V>) -> Shape<V> {
    let c = b.shape.center() + b.vel;
    let mut v = b.vel;
    if s.bounce {
        for i in 0..V::DIM {
            if c.get(i) < s.world_min.get(i) || c.get(i) > s.world_max.get(i) {
                v = v.with(i, -v.get(i));
            }
        }
    }
    b.vel = v;
    let shape = match b.shape {
        Shape::Sphere(sp) => Shape::sphere(sp.center + b.vel, sp.radius),
        Shape::Box(bx) => Shape::Box(Aabb {
            min: bx.min + b.vel,
            max: bx.max + b.vel,
        }),
    };
    b.shape = shape;
    shape
}

/// The pairs the scene must produce, computed directly from the bodies:
/// the independent check of the brute force itself.
fn expected_pairs<V: Vector>(bodies: &[Body<V>], matrix: &LayerMatrix) -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    for (i, a) in bodies.iter().enumerate() {
        for b in &bodies[i + 1..] {
            let layers_meet = (0..32).any(|x| {
                a.layer & (1 << x) != 0
                    && (0..32).any(|y| b.layer & (1 << y) != 0 && matrix.row(x) & (1 << y) != 0)
            });
            if (a.is_static && b.is_static)
                || a.layer & b.mask == 0
                || b.layer & a.mask == 0
                || !layers_meet
                || !a.shape.intersects(&b.shape)
            {
                continue;
            }
            out.insert((a.id.min(b.id), a.id.max(b.id)));
        }
    }
    out
}

/// Both structures side by side, with each body's handle in each.
struct Pairing<V: Vector, S> {
    s: S,
    b: BruteForce<V, u32>,
    handles: Vec<(Handle, Handle)>,
}

fn check<V: Vector, S: SpatialIndex<V, u32>>(s: &S, scene: &str, what: &str) {
    if let Err(e) = s.validate() {
        panic!("[{scene}] validate() after {what}: {e}");
    }
}

fn ids<V: Vector, S: SpatialIndex<V, u32>>(s: &S, hs: &[Handle]) -> Vec<u32> {
    let mut v: Vec<u32> = hs.iter().map(|&h| s.get(h).expect("live").value).collect();
    v.sort_unstable();
    v
}

/// Handles with the ids of their objects, in order.
fn with_ids<V: Vector, S: SpatialIndex<V, u32>>(s: &S, hs: &[Handle]) -> Vec<(Handle, u32)> {
    hs.iter().map(|&h| (h, s.get(h).unwrap().value)).collect()
}

fn pair_ids<V: Vector, S: SpatialIndex<V, u32>>(s: &mut S) -> Vec<(u32, u32)> {
    let mut contacts = Vec::new();
    s.contacts(&mut contacts);
    let mut v: Vec<(u32, u32)> = contacts
        .iter()
        .map(|c| {
            assert!(c.a < c.b, "pair not ordered");
            let (x, y) = (s.get(c.a).unwrap().value, s.get(c.b).unwrap().value);
            assert!(
                c.depth >= 0.0 && (c.normal.length() - 1.0).abs() < 1e-3,
                "bad contact {c:?}"
            );
            (x.min(y), x.max(y))
        })
        .collect();
    v.sort_unstable();
    let n = v.len();
    v.dedup();
    assert_eq!(n, v.len(), "a pair reported twice");
    v
}

/// Random queries of every kind, compared between the structure and the
/// brute force.
fn compare_queries<V: Vector, S: SpatialIndex<V, u32>>(
    scene: &Scene<V>,
    p: &mut Pairing<V, S>,
    r: &mut Rng64,
    frame: usize,
) {
    let (mut out_s, mut out_b) = (Vec::new(), Vec::new());
    let (mut hits_s, mut hits_b) = (Vec::new(), Vec::new());
    let ext = scene.world_max - scene.world_min;
    let lo = scene.world_min - ext * 0.2;
    let hi = scene.world_max + ext * 0.2;
    let tag = |k: &str, i: usize| format!("[{}] frame {frame} {k} query {i}", scene.name);
    for i in 0..scene.queries {
        let filter = if scene.layers {
            // Every layer one query in sixteen.
            match r.random_range(1..17) {
                16 => Filter::ALL,
                f => Filter::layers(f),
            }
        } else {
            Filter::ALL
        };
        // Box
        let a: V = vec_in(r, lo, hi);
        let size: V = vec_in(r, V::ZERO, ext * 0.3);
        let bx = Aabb::new(a, a + size).unwrap();
        p.s.query_aabb(&bx, filter, &mut out_s);
        p.b.query_aabb(&bx, filter, &mut out_b);
        assert_eq!(ids(&p.s, &out_s), ids(&p.b, &out_b), "{}", tag("box", i));
        // The iterator form: the same handles in the same order, each with
        // its own object.
        let found: Vec<(Handle, u32)> =
            p.s.objects_in(&bx, filter)
                .map(|(h, o)| (h, o.value))
                .collect();
        assert_eq!(found, with_ids(&p.s, &out_s), "{}", tag("objects_in", i));
        // Sphere and radius
        let c: V = vec_in(r, lo, hi);
        let rad = r.random_range(0.0..ext.max_element() * 0.2);
        p.s.query_sphere(&Sphere::new(c, rad).unwrap(), filter, &mut out_s);
        p.b.query_sphere(&Sphere::new(c, rad).unwrap(), filter, &mut out_b);
        assert_eq!(ids(&p.s, &out_s), ids(&p.b, &out_b), "{}", tag("sphere", i));
        p.s.query_radius(c, rad * 0.5, filter, &mut out_s);
        p.b.query_radius(c, rad * 0.5, filter, &mut out_b);
        assert_eq!(ids(&p.s, &out_s), ids(&p.b, &out_b), "{}", tag("radius", i));
        let found: Vec<(Handle, u32)> =
            p.s.objects_within(c, rad * 0.5, filter)
                .map(|(h, o)| (h, o.value))
                .collect();
        assert_eq!(
            found,
            with_ids(&p.s, &out_s),
            "{}",
            tag("objects_within", i)
        );
        // Frustum: six random planes through points of the world, facing
        // roughly inwards, so results are neither empty nor everything.
        let mid = (scene.world_min + scene.world_max) * 0.5;
        let planes = core::array::from_fn(|_| {
            let n: V = unit(r);
            let through = mid - n * (ext.max_element() * r.random_range(0.05..0.6));
            Plane::new(n, -n.dot(through)).unwrap()
        });
        let f = Frustum::new(planes);
        p.s.query_frustum(&f, filter, &mut out_s);
        p.b.query_frustum(&f, filter, &mut out_b);
        assert_eq!(
            ids(&p.s, &out_s),
            ids(&p.b, &out_b),
            "{}",
            tag("frustum", i)
        );
        // Cone
        let apex: V = vec_in(r, lo, hi);
        let cone = Cone::new(
            apex,
            unit::<V>(r),
            r.random_range(0.0..3.2f32).min(core::f32::consts::PI),
            r.random_range(0.0..ext.max_element()),
        )
        .unwrap();
        p.s.query_cone(&cone, filter, &mut out_s);
        p.b.query_cone(&cone, filter, &mut out_b);
        assert_eq!(ids(&p.s, &out_s), ids(&p.b, &out_b), "{}", tag("cone", i));
        // Rays: all hits (same objects, same distances, same order), nearest.
        let origin: V = vec_in(r, lo, hi);
        let ray = Ray::new(origin, unit::<V>(r)).unwrap();
        let max = r.random_range(0.0..ext.max_element() * 1.5);
        p.s.ray_all(&ray, max, filter, &mut hits_s);
        p.b.ray_all(&ray, max, filter, &mut hits_b);
        let as_ids = |s: &S, hs: &[sparti::RayHit<V>]| -> Vec<(u32, f32)> {
            hs.iter()
                .map(|h| (s.get(h.handle).unwrap().value, h.distance))
                .collect()
        };
        let hb: Vec<(u32, f32)> = hits_b
            .iter()
            .map(|h| (p.b.get(h.handle).unwrap().value, h.distance))
            .collect();
        assert_eq!(as_ids(&p.s, &hits_s), hb, "{}", tag("ray_all", i));
        assert!(
            hb.windows(2).all(|w| w[0].1 <= w[1].1),
            "ray hits not sorted"
        );
        let ns = p.s.ray_nearest(&ray, max, filter);
        let nb = p.b.ray_nearest(&ray, max, filter);
        assert_eq!(
            ns.map(|h| (
                p.s.get(h.handle).unwrap().value,
                h.distance,
                h.point,
                h.normal
            )),
            nb.map(|h| (
                p.b.get(h.handle).unwrap().value,
                h.distance,
                h.point,
                h.normal
            )),
            "{}",
            tag("ray_nearest", i)
        );
        if let Some(first) = hb.first() {
            assert_eq!(
                nb.map(|h| h.distance),
                Some(first.1),
                "nearest is not the first hit"
            );
        }
        // k nearest: same objects, same distances, same order.
        let point: V = vec_in(r, lo, hi);
        let k = [0, 1, 3, 10, 1000][i % 5];
        let (mut ks, mut kb) = (Vec::new(), Vec::new());
        p.s.nearest_k(point, k, filter, &mut ks);
        p.b.nearest_k(point, k, filter, &mut kb);
        let found: Vec<(Neighbor, u32)> =
            p.s.nearest(point, k, filter)
                .map(|(n, o)| (n, o.value))
                .collect();
        let want: Vec<(Neighbor, u32)> = ks
            .iter()
            .map(|&n| (n, p.s.get(n.handle).unwrap().value))
            .collect();
        assert_eq!(found, want, "{}", tag("nearest", i));
        let ks: Vec<(u32, f32)> = ks
            .iter()
            .map(|n| (p.s.get(n.handle).unwrap().value, n.distance))
            .collect();
        let kb: Vec<(u32, f32)> = kb
            .iter()
            .map(|n| (p.b.get(n.handle).unwrap().value, n.distance))
            .collect();
        assert_eq!(ks, kb, "{}", tag("nearest_k", i));
        assert!(kb.len() <= k && kb.windows(2).all(|w| w[0].1 <= w[1].1));
        if k > 0 && !kb.is_empty() && kb.len() < k {
            // Fewer than k found: they must be every object passing the filter.
            p.b.query_radius(point, 1e30, filter, &mut out_b);
            assert_eq!(kb.len(), out_b.len(), "nearest_k found too few");
        }
    }
}

/// The pairs `t` finds, sorted, after checking that they are the brute
/// force's (each structure has its own order).
pub fn same_pairs<V: Vector, S: SpatialIndex<V, u32>>(t: &S, b: &BruteForce<V, u32>) -> Vec<Pair> {
    let (mut pt, mut pb) = (Vec::new(), Vec::new());
    t.pairs(&mut pt);
    b.pairs(&mut pb);
    pt.sort();
    pb.sort();
    assert_eq!(pt, pb);
    pt
}

/// Runs a scene through `make()` and the brute force, frame by frame, and
/// panics at the first difference or broken invariant. Returns the number of
/// pairs seen over all frames (so callers can check the scene is not trivial).
pub fn run_scene<V: Vector, S: SpatialIndex<V, u32>>(
    scene: &Scene<V>,
    make: impl Fn() -> S,
) -> usize {
    let mut r = rng(scene.seed);
    let clusters: Vec<V> = (0..4)
        .map(|_| vec_in(&mut r, scene.world_min, scene.world_max))
        .collect();
    let mut bodies: Vec<Body<V>> = (0..scene.objects as u32)
        .map(|id| random_body(scene, &mut r, id, &clusters))
        .collect();
    let mut next_id = scene.objects as u32;
    let mut p = Pairing {
        s: make(),
        b: BruteForce::new(),
        handles: Vec::new(),
    };
    // Half inserted one by one, half in bulk.
    if let Some(m) = scene.matrix {
        p.s.set_layer_matrix(m);
        p.b.set_layer_matrix(m);
    }
    let matrix = scene.matrix.unwrap_or_default();
    let (mut ev_s, mut ev_b) = (ContactEvents::new(), ContactEvents::new());
    // Fed by the structure's own contact search instead of a pair search.
    let mut ev_c = ContactEvents::new();
    let mut contacts = Vec::new();
    let mut previous: BTreeSet<(u32, u32)> = BTreeSet::new();
    let half = bodies.len() / 2;
    for body in &bodies[..half] {
        let hs = p.s.insert(desc(body)).expect("insert");
        let hb = p.b.insert(desc(body)).expect("insert");
        p.handles.push((hs, hb));
        if scene.validate_each {
            check(&p.s, scene.name, "insert");
        }
    }
    let descs: Vec<_> = bodies[half..].iter().map(desc).collect();
    let hs = p.s.insert_many(descs.clone()).expect("insert_many");
    let hb = p.b.insert_many(descs).expect("insert_many");
    p.handles.extend(hs.into_iter().zip(hb));
    check(&p.s, scene.name, "insert_many");
    assert_eq!(p.s.len(), bodies.len());
    let mut total_pairs = 0;
    for frame in 0..scene.frames {
        // Move.
        for (body, &(hs, hb)) in bodies.iter_mut().zip(&p.handles) {
            if body.is_static {
                continue;
            }
            let shape = moved(scene, body);
            p.s.update(hs, shape).expect("update");
            p.b.update(hb, shape).expect("update");
            if scene.validate_each {
                check(&p.s, scene.name, "update");
            }
        }
        // Churn: remove some, insert as many new ones.
        let churn = (bodies.len() as f64 * scene.churn) as usize;
        for _ in 0..churn {
            let i = r.random_range(0..bodies.len());
            let body = bodies.swap_remove(i);
            let (hs, hb) = p.handles.swap_remove(i);
            assert_eq!(p.s.remove(hs).expect("remove"), body.id);
            assert_eq!(p.b.remove(hb).expect("remove"), body.id);
            assert!(p.s.get(hs).is_err(), "removed handle still answers");
            if scene.validate_each {
                check(&p.s, scene.name, "remove");
            }
        }
        for _ in 0..churn {
            let body = random_body(scene, &mut r, next_id, &clusters);
            next_id += 1;
            let hs = p.s.insert(desc(&body)).expect("insert");
            let hb = p.b.insert(desc(&body)).expect("insert");
            p.handles.push((hs, hb));
            bodies.push(body);
            if scene.validate_each {
                check(&p.s, scene.name, "insert");
            }
        }
        // The build step on odd frames; on even ones the pair search and
        // the queries meet the churn's insertions still queued, and must
        // see them all the same.
        if frame % 2 == 1 {
            p.s.flush();
            assert_eq!(
                p.s.stats().pending,
                0,
                "[{}] flush left objects queued",
                scene.name
            );
            check(&p.s, scene.name, "flush");
        }
        // Pairs: structure == brute force == direct computation.
        let ps = pair_ids(&mut p.s);
        let pb = pair_ids(&mut p.b);
        let expected_set = expected_pairs(&bodies, &matrix);
        let expected: Vec<(u32, u32)> = expected_set.iter().copied().collect();
        assert_eq!(
            pb, expected,
            "[{}] frame {frame}: brute force pairs are wrong",
            scene.name
        );
        if ps != pb {
            let missing: Vec<_> = pb.iter().filter(|x| !ps.contains(x)).take(5).collect();
            let extra: Vec<_> = ps.iter().filter(|x| !pb.contains(x)).take(5).collect();
            panic!(
                "[{}] frame {frame}: {} pairs vs brute force {}; missing {missing:?}, extra {extra:?}",
                scene.name,
                ps.len(),
                pb.len()
            );
        }
        total_pairs += ps.len();
        // Contact events: same as the brute force's, and as the difference
        // of this frame's expected pairs and the last's. Handles of removed
        // objects are stale, so events are compared as handles.
        ev_s.update(&p.s);
        ev_b.update(&p.b);
        p.s.contacts(&mut contacts);
        ev_c.observe(contacts.iter().map(|c| c.pair()));
        // The same records with their objects, in the same order.
        let mut with_objects = Vec::new();
        p.s.for_each_contact(|c, oa, ob| {
            assert_eq!(
                (oa.value, ob.value),
                (p.s.get(c.a).unwrap().value, p.s.get(c.b).unwrap().value)
            );
            with_objects.push(*c);
        });
        assert_eq!(
            with_objects, contacts,
            "[{}] frame {frame}: for_each_contact",
            scene.name
        );
        assert_eq!(
            (ev_c.started(), ev_c.stopped(), ev_c.touching()),
            (ev_s.started(), ev_s.stopped(), ev_s.touching()),
            "[{}] frame {frame}: events from the contacts",
            scene.name
        );
        // The started pairs' records, from the same contacts.
        let mut records: Vec<Pair> = ev_c.started_in(&contacts).map(|c| c.pair()).collect();
        records.sort_unstable();
        assert_eq!(
            records,
            ev_c.started(),
            "[{}] frame {frame}: records of the started pairs",
            scene.name
        );
        assert_eq!(
            ev_s.started(),
            ev_b.started(),
            "[{}] frame {frame}: started",
            scene.name
        );
        assert_eq!(
            ev_s.stopped(),
            ev_b.stopped(),
            "[{}] frame {frame}: stopped",
            scene.name
        );
        let started: BTreeSet<(u32, u32)> = ev_b
            .started()
            .iter()
            .map(|x| {
                let (a, b) = (p.b.get(x.a).unwrap().value, p.b.get(x.b).unwrap().value);
                (a.min(b), a.max(b))
            })
            .collect();
        let expected_started: BTreeSet<(u32, u32)> =
            expected_set.difference(&previous).copied().collect();
        assert_eq!(
            started, expected_started,
            "[{}] frame {frame}: started pairs",
            scene.name
        );
        let expected_stopped = previous.difference(&expected_set).count();
        assert_eq!(
            ev_b.stopped().len(),
            expected_stopped,
            "[{}] frame {frame}: stopped pairs",
            scene.name
        );
        assert!(
            ev_b.started().windows(2).all(|w| w[0] < w[1]),
            "events sorted"
        );
        previous = expected_set;
        check(&p.s, scene.name, "pairs");
        compare_queries(scene, &mut p, &mut r, frame);
        assert_eq!(p.s.len(), bodies.len());
        assert_eq!(p.s.stats().objects, bodies.len());
        p.s.end_frame();
        p.b.end_frame();
        check(&p.s, scene.name, "end_frame");
    }
    total_pairs
}

/// A sphere or a box (even odds) centred in the cube `[0, side)`, of size
/// (radius or largest half extent) up to 3, zero included.
pub fn sphere_or_box<V: Vector>(r: &mut Rng64, side: f32) -> Shape<V> {
    let c: V = in_cube(r, 0.0, side);
    let size = r.random_range(0.0..3.0f32);
    if r.random_bool(0.5) {
        Shape::sphere(c, size)
    } else {
        Shape::cuboid(c, in_cube(r, 0.0, size + f32::EPSILON))
    }
}

/// The values of every pair `pairs()` finds, each pair ordered, sorted.
pub fn pair_values<V: Vector, S: SpatialIndex<V, u32>>(s: &S) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    s.pairs(&mut pairs);
    let mut v: Vec<_> = pairs
        .iter()
        .map(|p| {
            let (a, b) = (s.get(p.a).unwrap().value, s.get(p.b).unwrap().value);
            (a.min(b), a.max(b))
        })
        .collect();
    v.sort_unstable();
    v
}

/// Runs every scene through a structure from `make` beside the brute
/// force ([`run_scene`]), and checks that the scenes produced pairs at all.
pub fn run_all<V: Vector, S: SpatialIndex<V, u32>>(scenes: &[Scene<V>], make: impl Fn() -> S) {
    let total: usize = scenes.iter().map(|s| run_scene(s, &make)).sum();
    assert!(
        total > 0,
        "the scenes produced no pairs at all: the test would prove nothing"
    );
}

/// The standard scenes for a dimension, over a world of side `side`.
pub fn standard_scenes<V: Vector>(side: f32) -> Vec<Scene<V>> {
    let ext = V::splat(side);
    let mut flat = V::splat(side * 10.0);
    flat = flat.with(V::DIM - 1, 2.0);
    let base = |name, seed| Scene::<V>::new(name, seed, ext);
    vec![
        Scene {
            objects: 200,
            ..base("uniform", 1)
        },
        Scene {
            layout: Layout::Clustered,
            objects: 200,
            ..base("clustered", 2)
        },
        Scene {
            objects: 200,
            speed: 3.0,
            ..Scene::new("flat 2.5D", 3, flat)
        },
        Scene {
            layout: Layout::OnePoint,
            objects: 120,
            speed: 0.0,
            size: (0.0, 0.5),
            ..base("one point", 4)
        },
        Scene {
            layout: Layout::OnePoint,
            objects: 80,
            speed: 0.3,
            size: (0.0, 0.5),
            ..base("one point, moving apart", 5)
        },
        Scene {
            huge_share: 0.05,
            huge: side * 0.8,
            size: (0.01, 0.5),
            ..base("huge among tiny", 6)
        },
        Scene {
            zero_share: 0.6,
            size: (0.0, 1.0),
            ..base("zero-size", 7)
        },
        Scene {
            bounce: false,
            speed: side * 0.15,
            frames: 15,
            ..base("leaving the world", 8)
        },
        Scene {
            churn: 0.1,
            frames: 20,
            ..base("churn", 9)
        },
        Scene {
            static_share: 0.5,
            huge_share: 0.1,
            huge: side * 0.4,
            ..base("static and moving", 10)
        },
        Scene {
            layers: true,
            static_share: 0.2,
            ..base("layers and masks", 11)
        },
        Scene {
            layers: true,
            matrix: Some({
                let mut m = LayerMatrix::ALL;
                m.set(0, 1, false);
                m.set(2, 2, false);
                m.set(3, 0, false);
                m
            }),
            churn: 0.05,
            ..base("layer matrix", 13)
        },
        Scene {
            objects: 1500,
            frames: 6,
            validate_each: false,
            queries: 3,
            churn: 0.02,
            ..base("many objects", 12)
        },
    ]
}
