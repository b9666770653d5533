//! Every structure against the brute force on the standard scenes (2D and
//! 3D), and the brute force against a direct computation.

use crate::common::{run_all, standard_scenes};
use glam::{Vec2, Vec3};
use sparti::{Aabb, BruteForce, Octree, OrthtreeConfig, OutOfBounds, Quadtree, Vector};

#[test]
fn brute_force_matches_direct_computation_3d() {
    run_all(&standard_scenes::<Vec3>(60.0), BruteForce::<Vec3, u32>::new);
}

#[test]
fn brute_force_matches_direct_computation_2d() {
    run_all(&standard_scenes::<Vec2>(60.0), BruteForce::<Vec2, u32>::new);
}

#[test]
fn octree_matches_brute_force() {
    run_all(&standard_scenes::<Vec3>(60.0), Octree::<u32>::new);
}

#[test]
fn quadtree_matches_brute_force() {
    run_all(&standard_scenes::<Vec2>(60.0), Quadtree::<u32>::new);
}

#[test]
fn octree_with_small_nodes_and_preset_world_matches_brute_force() {
    let make = || {
        Octree::<u32>::with_config(OrthtreeConfig {
            world: Some(Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0)).unwrap()),
            min_node_size: 0.125,
            out_of_bounds: OutOfBounds::Grow,
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec3>(60.0), make);
}

#[test]
fn quadtree_with_large_nodes_matches_brute_force() {
    let make = || {
        Quadtree::<u32>::with_config(OrthtreeConfig {
            min_node_size: 16.0,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}

// ---------------------------------------------------------------------------
// The pair search's grid (kernel/grid.rs) against the brute force: scenes
// built to hit its edge cases (boxes touching exactly on cell boundaries,
// sizes far apart, flat and huge worlds, crowded scenes that fall back to
// the tree walk, moving objects, statics, layers), run through every tree
// family of each dimension.
// ---------------------------------------------------------------------------

mod grid_scenes {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
    use std::fmt::Write as _;

    use glam::{Vec2, Vec3};
    use rand::Rng;
    use sparti::{
        Aabb, BruteForce, Bsp2, Bsp3, Error, Handle, LayerMatrix, LooseOctree, LooseQuadtree,
        MAX_COORDINATE, Object, ObjectDesc, Octree, Quadtree, Shape, SpatialIndex, Vector,
    };

    use crate::common::{Rng64, rng};

    /// One object as the scene sees it.
    #[derive(Clone, Copy, Debug)]
    pub struct Body<V: Vector> {
        pub shape: Shape<V>,
        pub is_static: bool,
        pub layer: u32,
        pub mask: u32,
    }

    impl<V: Vector> Body<V> {
        pub fn new(shape: Shape<V>) -> Self {
            Self {
                shape,
                is_static: false,
                layer: 1,
                mask: u32::MAX,
            }
        }

        fn desc(&self, id: u32) -> ObjectDesc<V, u32> {
            ObjectDesc::new(self.shape, id)
                .with_layer(self.layer)
                .with_mask(self.mask)
                .with_static(self.is_static)
        }

        fn object(&self, id: u32) -> Object<V, u32> {
            Object {
                shape: self.shape,
                value: id,
                layer: self.layer,
                mask: self.mask,
                is_static: self.is_static,
            }
        }
    }

    /// A step of a scene, applied to the structure and the brute force.
    pub enum Op<V: Vector> {
        Insert(u32, Body<V>),
        InsertMany(Vec<(u32, Body<V>)>),
        Update(u32, Shape<V>),
        Remove(u32),
        Flush,
        EndFrame,
        /// Compare the pairs (and contacts, if the script asks) here.
        Check(String),
    }

    /// A deterministic scene: its steps, and the layer matrix.
    pub struct Script<V: Vector> {
        pub name: String,
        pub matrix: Option<LayerMatrix>,
        /// Compare contacts too (skipped where there are millions of pairs).
        pub contacts: bool,
        /// Check the brute force against the direct computation too
        /// (skipped where the answer is known).
        pub direct: bool,
        pub ops: Vec<Op<V>>,
        next_id: u32,
    }

    impl<V: Vector> Script<V> {
        pub fn new(name: impl Into<String>) -> Self {
            Self {
                name: name.into(),
                matrix: None,
                contacts: true,
                direct: true,
                ops: Vec::new(),
                next_id: 0,
            }
        }

        /// Bodies with fresh ids.
        pub fn ids(&mut self, bodies: Vec<Body<V>>) -> Vec<(u32, Body<V>)> {
            bodies
                .into_iter()
                .map(|b| {
                    self.next_id += 1;
                    (self.next_id - 1, b)
                })
                .collect()
        }

        /// A still scene: half inserted in bulk and built, the other half
        /// inserted one by one and checked while still queued, then built
        /// and checked, then checked again after `end_frame`.
        pub fn still(name: impl Into<String>, bodies: Vec<Body<V>>) -> Self {
            let mut s = Self::new(name);
            let all = s.ids(bodies);
            let half = all.len() / 2;
            s.ops.push(Op::InsertMany(all[..half].to_vec()));
            s.ops.push(Op::Flush);
            s.ops.push(Op::Check("half built".into()));
            for &(id, b) in &all[half..] {
                s.ops.push(Op::Insert(id, b));
            }
            s.ops.push(Op::Check("half queued".into()));
            s.ops.push(Op::Flush);
            s.ops.push(Op::Check("built".into()));
            s.ops.push(Op::EndFrame);
            s.ops.push(Op::Check("after end_frame".into()));
            s
        }

        /// A still scene checked once, built (for scenes with very many
        /// pairs).
        pub fn once(name: impl Into<String>, bodies: Vec<Body<V>>) -> Self {
            let mut s = Self::new(name);
            let all = s.ids(bodies);
            s.ops.push(Op::InsertMany(all));
            s.ops.push(Op::Flush);
            s.ops.push(Op::Check("built".into()));
            s
        }
    }

    /// What a script's run saw.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Outcome {
        /// Pairs over all checks.
        pub pairs: usize,
        pub checks: usize,
        /// Checks at which the pair search ran on the grid (by the
        /// structure's counters).
        pub grid_checks: usize,
        /// Queries checked, and how many of them the grid answered.
        pub queries: usize,
        pub grid_queries: usize,
    }

    fn validate<V: Vector, S: SpatialIndex<V, u32>>(s: &S, tag: &str) {
        if let Err(e) = s.validate() {
            panic!("{tag}: validate() failed: {e}");
        }
    }

    fn pair_ids<V: Vector, S: SpatialIndex<V, u32>>(
        s: &S,
        pairs: &[sparti::Pair],
        tag: &str,
    ) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = pairs
            .iter()
            .map(|p| {
                assert!(p.a < p.b, "{tag}: pair not ordered: {p:?}");
                let (x, y) = (s.get(p.a).unwrap().value, s.get(p.b).unwrap().value);
                (x.min(y), x.max(y))
            })
            .collect();
        v.sort_unstable();
        let n = v.len();
        v.dedup();
        assert_eq!(n, v.len(), "{tag}: a pair reported twice");
        v
    }

    fn contact_ids<V: Vector, S: SpatialIndex<V, u32>>(s: &S, tag: &str) -> Vec<(u32, u32)> {
        let mut contacts = Vec::new();
        s.contacts(&mut contacts);
        let mut par = Vec::new();
        s.par_contacts(&mut par);
        assert!(contacts == par, "{tag}: par_contacts differs from contacts");
        let mut v: Vec<(u32, u32)> = contacts
            .iter()
            .map(|c| {
                assert!(c.a < c.b, "{tag}: contact not ordered");
                assert!(
                    c.depth >= 0.0 && (c.normal.length() - 1.0).abs() < 1e-3,
                    "{tag}: bad contact {c:?}"
                );
                let (x, y) = (s.get(c.a).unwrap().value, s.get(c.b).unwrap().value);
                (x.min(y), x.max(y))
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// The pairs computed directly from the bodies, with the library's own
    /// pair rule (`Object::pairs_with`).
    fn direct_pairs<V: Vector>(
        bodies: &BTreeMap<u32, Body<V>>,
        matrix: &LayerMatrix,
    ) -> Vec<(u32, u32)> {
        let objs: Vec<Object<V, u32>> = bodies.iter().map(|(&id, b)| b.object(id)).collect();
        let mut out = Vec::new();
        for (i, a) in objs.iter().enumerate() {
            for b in &objs[i + 1..] {
                if a.pairs_with(b, matrix) {
                    out.push((a.value, b.value));
                }
            }
        }
        out
    }

    /// The difference of two sorted pair lists, with the bodies involved.
    fn diff<V: Vector>(
        got: &[(u32, u32)],
        want: &[(u32, u32)],
        bodies: &BTreeMap<u32, Body<V>>,
    ) -> String {
        let g: BTreeSet<_> = got.iter().copied().collect();
        let w: BTreeSet<_> = want.iter().copied().collect();
        let missing: Vec<_> = w.difference(&g).copied().collect();
        let extra: Vec<_> = g.difference(&w).copied().collect();
        let mut s = format!(
            "{} pairs, expected {}: {} missing, {} extra",
            got.len(),
            want.len(),
            missing.len(),
            extra.len()
        );
        for (what, list) in [("missing", &missing), ("extra", &extra)] {
            for &(a, b) in list.iter().take(6) {
                let _ = write!(
                    s,
                    "\n  {what} ({a}, {b}): {:?} / {:?}",
                    bodies.get(&a),
                    bodies.get(&b)
                );
            }
        }
        s
    }

    /// Region and ray queries at a check, against the answer computed
    /// directly from the bodies (`Region::matches`, `Shape::cast_ray`, the
    /// filter): boxes, spheres and view cones around the bodies (their own
    /// boxes, touching their neighbours exactly, points on their corners,
    /// and a box around everything), and rays towards them, some along the
    /// axes from points on their faces. Counts the queries the grid
    /// answered (by the structure's counters).
    fn check_queries<V: Vector, S: SpatialIndex<V, u32>>(
        s: &S,
        bodies: &BTreeMap<u32, Body<V>>,
        handles: &HashMap<u32, (Handle, Option<Handle>)>,
        seed: u64,
        tag: &str,
        out: &mut Outcome,
    ) {
        use sparti::{Cone, Filter, Region, Sphere};
        if bodies.is_empty() {
            return;
        }
        let list: Vec<(u32, Body<V>)> = bodies.iter().map(|(&id, &b)| (id, b)).collect();
        let mut r = rng(0x9E37_79B9 ^ seed.wrapping_mul(0x1000_0001) ^ list.len() as u64);
        let value = |h: Handle| s.get(h).expect("a live handle").value;
        let filters = [Filter::ALL, Filter::layers(1), Filter::layers(0b110)];
        let region_check =
            |name: &str, region: &dyn Fn(&Shape<V>) -> bool, got: Vec<Handle>, f: Filter| {
                let mut got: Vec<u32> = got.into_iter().map(value).collect();
                got.sort_unstable();
                let n = got.len();
                got.dedup();
                assert_eq!(n, got.len(), "{tag}: {name} query reported an object twice");
                let want: Vec<u32> = list
                    .iter()
                    .filter(|(_, b)| f.accepts(b.layer) && region(&b.shape))
                    .map(|&(id, _)| id)
                    .collect();
                assert!(
                    got == want,
                    "{tag}: {name} query: {} objects, expected {}",
                    got.len(),
                    want.len()
                );
            };
        let all = list
            .iter()
            .fold(list[0].1.shape.aabb(), |a, (_, b)| a.union(&b.shape.aabb()));
        let mut found = Vec::new();
        let mut all_hits = Vec::new();
        for q in 0..12 {
            let (_, b) = list[r.random_range(0..list.len())];
            let bb = b.shape.aabb();
            let f = filters[q % filters.len()];
            let size = (bb.max - bb.min).max_element().max(1e-3);
            // Boxes: the body's own, a point on its corner, a random one
            // around it, and every object.
            let boxes = [
                bb,
                Aabb {
                    min: bb.max,
                    max: bb.max,
                },
                Aabb {
                    min: bb.min - V::splat(size * r.random_range(0.0..3.0f32)),
                    max: bb.max + V::splat(size * r.random_range(0.0..3.0f32)),
                },
                all,
            ];
            for qb in boxes {
                let before = s.counters().grid_searches;
                s.query_aabb(&qb, f, &mut found);
                out.grid_queries += usize::from(s.counters().grid_searches > before);
                out.queries += 1;
                region_check("box", &|sh| qb.matches(sh), found.clone(), f);
            }
            let c = bb.center();
            let sphere = Sphere {
                center: c,
                radius: size * r.random_range(0.0..2.5f32),
            };
            let before = s.counters().grid_searches;
            s.query_sphere(&sphere, f, &mut found);
            out.grid_queries += usize::from(s.counters().grid_searches > before);
            out.queries += 1;
            region_check("sphere", &|sh| sphere.matches(sh), found.clone(), f);
            let dir = V::ZERO.with(q % V::DIM, 1.0);
            if let Ok(cone) =
                Cone::new(c - dir * size, dir, r.random_range(0.1..1.5f32), size * 4.0)
            {
                let before = s.counters().grid_searches;
                s.query_cone(&cone, f, &mut found);
                out.grid_queries += usize::from(s.counters().grid_searches > before);
                out.queries += 1;
                region_check("cone", &|sh| cone.matches(sh), found.clone(), f);
            }
            // A frustum: six planes through points around the body,
            // facing it (the grid's blocks of cells, where it has no
            // bounding box).
            let planes: [sparti::Plane<V>; 6] = core::array::from_fn(|_| {
                let n: V = super::grid_scenes::random_in(&mut r, -1.0, 1.0);
                // (`Plane::new` makes the normal a unit one.)
                let n = if n.length() > 1e-3 {
                    n * (1.0 / n.length())
                } else {
                    V::ZERO.with(0, 1.0)
                };
                let through = c - n * (size * r.random_range(0.5..6.0f32));
                sparti::Plane::new(n, -n.dot(through)).expect("a unit normal")
            });
            let frustum = sparti::Frustum::new(planes);
            let before = s.counters().grid_searches;
            s.query_frustum(&frustum, f, &mut found);
            out.grid_queries += usize::from(s.counters().grid_searches > before);
            out.queries += 1;
            region_check("frustum", &|sh| frustum.matches(sh), found.clone(), f);
            // Rays: from outside everything towards the body, and along an
            // axis from a point on one of its faces.
            let far: V = super::grid_scenes::random_in(&mut r, -1.0, 1.0);
            let from = c + far * ((all.max - all.min).max_element() + 1.0);
            let axis = q % V::DIM;
            let on_face = c.with(axis, bb.min.get(axis));
            let rays = [
                (from, c - from, f32::INFINITY),
                (on_face, V::ZERO.with(axis, 1.0), f32::INFINITY),
                (on_face, V::ZERO.with((axis + 1) % V::DIM, -1.0), size * 3.0),
                (c, far, size * r.random_range(0.0..4.0f32)),
            ];
            for (o, d, max) in rays {
                let Ok(ray) = sparti::Ray::new(o, d) else {
                    continue;
                };
                let before = s.counters().grid_searches;
                let got = s.ray_nearest(&ray, max, f);
                out.grid_queries += usize::from(s.counters().grid_searches > before);
                out.queries += 1;
                let hits: Vec<(f32, u32)> = list
                    .iter()
                    .filter(|(_, b)| f.accepts(b.layer))
                    .filter_map(|&(id, b)| b.shape.cast_ray(&ray, max).map(|x| (x.distance, id)))
                    .collect();
                let best = hits.iter().map(|h| h.0).fold(f32::INFINITY, f32::min);
                // Ties go to the smaller handle.
                let want = hits
                    .iter()
                    .filter(|h| h.0 == best)
                    .min_by_key(|h| handles[&h.1].0)
                    .map(|h| (h.0, h.1));
                let got = got.map(|h| (h.distance, value(h.handle)));
                assert!(
                    got == want,
                    "{tag}: ray from {o:?} along {d:?} within {max}: {got:?}, expected {want:?}"
                );
                // Every hit, by distance then handle.
                let before = s.counters().grid_searches;
                s.ray_all(&ray, max, f, &mut all_hits);
                out.grid_queries += usize::from(s.counters().grid_searches > before);
                out.queries += 1;
                let got: Vec<(f32, u32)> = all_hits
                    .iter()
                    .map(|h| (h.distance, value(h.handle)))
                    .collect();
                let mut want = hits;
                want.sort_by(|a, b| {
                    a.0.total_cmp(&b.0)
                        .then(handles[&a.1].0.cmp(&handles[&b.1].0))
                });
                assert!(
                    got == want,
                    "{tag}: all hits of the ray from {o:?} along {d:?} within {max}: {} hits, \
                     expected {}",
                    got.len(),
                    want.len()
                );
            }
            // The k nearest of the body's centre and of a point near it,
            // by distance then handle.
            let near: V = super::grid_scenes::random_in(&mut r, -3.0, 3.0);
            for (p, k) in [(c, 1 + q % 3), (c + near * size, [1, 4, 9][q % 3])] {
                let before = s.counters().grid_searches;
                let got: Vec<(f32, u32)> = s
                    .nearest(p, k, f)
                    .map(|(n, o)| (n.distance, o.value))
                    .collect();
                out.grid_queries += usize::from(s.counters().grid_searches > before);
                out.queries += 1;
                let mut want: Vec<(f32, u32)> = list
                    .iter()
                    .filter(|(_, b)| f.accepts(b.layer))
                    .map(|&(id, b)| (b.shape.distance_to_point(p), id))
                    .collect();
                want.sort_by(|a, b| {
                    a.0.total_cmp(&b.0)
                        .then(handles[&a.1].0.cmp(&handles[&b.1].0))
                });
                want.truncate(k);
                assert!(
                    got == want,
                    "{tag}: the {k} nearest of {p:?}: {got:?}, expected {want:?}"
                );
            }
        }
    }

    /// Pairs as the objects' values.
    pub type PairList = Vec<(u32, u32)>;

    /// The reference answers of a script's checks: the brute force's pairs
    /// and contacts.
    pub type Answers = Vec<(PairList, PairList)>;

    /// Runs a script through `s`, comparing at each check with `answers`;
    /// when `answers` is empty, the brute force runs beside `s`, checked
    /// against the direct computation, and fills it (so that the brute
    /// force runs once per script, not once per structure).
    pub fn run_script<V: Vector, S: SpatialIndex<V, u32>>(
        script: &Script<V>,
        kind: &str,
        mut s: S,
        answers: &mut Answers,
    ) -> Outcome {
        let mut brute = answers.is_empty().then(BruteForce::<V, u32>::new);
        let matrix = script.matrix.unwrap_or_default();
        if let Some(m) = script.matrix {
            s.set_layer_matrix(m);
            if let Some(b) = &mut brute {
                b.set_layer_matrix(m);
            }
        }
        let mut handles: HashMap<u32, (Handle, Option<Handle>)> = HashMap::new();
        let mut bodies: BTreeMap<u32, Body<V>> = BTreeMap::new();
        let mut queued: HashSet<u32> = HashSet::new();
        let mut out = Outcome::default();
        let name = &script.name;
        for op in &script.ops {
            match op {
                Op::Insert(id, body) => {
                    let hs = s
                        .insert(body.desc(*id))
                        .unwrap_or_else(|e| panic!("[{name}] {kind}: insert {id}: {e}"));
                    let hb = brute
                        .as_mut()
                        .map(|b| b.insert(body.desc(*id)).expect("brute force insert"));
                    handles.insert(*id, (hs, hb));
                    bodies.insert(*id, *body);
                    queued.insert(*id);
                }
                Op::InsertMany(list) => {
                    let descs: Vec<_> = list.iter().map(|(id, body)| body.desc(*id)).collect();
                    let hs = s
                        .insert_many(descs.clone())
                        .unwrap_or_else(|e| panic!("[{name}] {kind}: insert_many: {e}"));
                    let hb = match &mut brute {
                        Some(b) => b
                            .insert_many(descs)
                            .expect("brute force insert_many")
                            .into_iter()
                            .map(Some)
                            .collect(),
                        None => vec![None; list.len()],
                    };
                    for (((id, body), hs), hb) in list.iter().zip(hs).zip(hb) {
                        handles.insert(*id, (hs, hb));
                        bodies.insert(*id, *body);
                        queued.insert(*id);
                    }
                    validate(&s, &format!("[{name}] {kind}: after insert_many"));
                }
                Op::Update(id, shape) => {
                    let (hs, hb) = handles[id];
                    s.update(hs, *shape)
                        .unwrap_or_else(|e| panic!("[{name}] {kind}: update {id}: {e}"));
                    if let (Some(b), Some(hb)) = (&mut brute, hb) {
                        b.update(hb, *shape).expect("brute force update");
                    }
                    bodies.get_mut(id).unwrap().shape = *shape;
                }
                Op::Remove(id) => {
                    let (hs, hb) = handles.remove(id).expect("live id");
                    assert_eq!(s.remove(hs).expect("remove"), *id);
                    if let (Some(b), Some(hb)) = (&mut brute, hb) {
                        assert_eq!(b.remove(hb).expect("remove"), *id);
                    }
                    bodies.remove(id);
                    queued.remove(id);
                }
                Op::Flush | Op::EndFrame => {
                    if matches!(op, Op::Flush) {
                        s.flush();
                        brute.as_mut().map(SpatialIndex::flush);
                    } else {
                        s.end_frame();
                        brute.as_mut().map(SpatialIndex::end_frame);
                    }
                    queued.clear();
                    assert_eq!(s.stats().pending, 0, "[{name}] {kind}: queue left");
                    validate(&s, &format!("[{name}] {kind}: after flush/end_frame"));
                }
                Op::Check(label) => {
                    let tag = format!("[{name}] {kind} at '{label}'");
                    validate(&s, &tag);
                    assert_eq!(s.len(), bodies.len(), "{tag}: len");
                    let mut raw = Vec::new();
                    let before = s.counters().grid_searches;
                    s.pairs(&mut raw);
                    out.grid_checks += usize::from(s.counters().grid_searches > before);
                    let mut par = Vec::new();
                    s.par_pairs(&mut par);
                    if raw != par {
                        let (a, b) = (pair_ids(&s, &raw, &tag), pair_ids(&s, &par, &tag));
                        let at = raw.iter().zip(&par).position(|(x, y)| x != y);
                        panic!(
                            "{tag}: par_pairs differs from pairs: {} pairs vs {}, same set: {}, \
                             first difference at index {at:?}",
                            par.len(),
                            raw.len(),
                            a == b
                        );
                    }
                    let got = pair_ids(&s, &raw, &tag);
                    if let Some(b) = &brute {
                        let mut braw = Vec::new();
                        b.pairs(&mut braw);
                        let want = pair_ids(b, &braw, &format!("{tag} (brute force)"));
                        if script.direct {
                            let direct = direct_pairs(&bodies, &matrix);
                            assert!(
                                want == direct,
                                "{tag}: the brute force disagrees with the direct computation: {}",
                                diff(&want, &direct, &bodies)
                            );
                        }
                        let contacts = if script.contacts {
                            contact_ids(b, &tag)
                        } else {
                            Vec::new()
                        };
                        answers.push((want, contacts));
                    }
                    let (want, cb) = &answers[out.checks];
                    let want = want.as_slice();
                    assert!(
                        got == want,
                        "{tag}: pairs differ from the brute force: {}",
                        diff(&got, want, &bodies)
                    );
                    if script.contacts {
                        let cs = contact_ids(&s, &tag);
                        assert!(
                            cs == *cb,
                            "{tag}: contacts differ from the brute force's: {}",
                            diff(&cs, cb, &bodies)
                        );
                    }
                    check_queries(&s, &bodies, &handles, out.checks as u64, &tag, &mut out);
                    out.checks += 1;
                    out.pairs += got.len();
                }
            }
        }
        out
    }

    fn report(script_name: &str, outs: &[(&str, Outcome)]) -> Outcome {
        for (kind, o) in &outs[1..] {
            assert_eq!(
                o, &outs[0].1,
                "[{script_name}] {kind} and {} saw different runs",
                outs[0].0
            );
        }
        let o = &outs[0].1;
        eprintln!(
            "[{script_name}] {} checks, {} pairs, grid used at {} checks; {} queries, {} on the grid",
            o.checks, o.pairs, o.grid_checks, o.queries, o.grid_queries
        );
        o.clone()
    }

    /// The script through every 3D tree family.
    pub fn all_3d(script: &Script<Vec3>) -> Outcome {
        let mut a = Answers::new();
        let outs = [
            (
                "Octree",
                run_script(script, "Octree", Octree::new(), &mut a),
            ),
            (
                "LooseOctree",
                run_script(script, "LooseOctree", LooseOctree::new(), &mut a),
            ),
            ("Bsp3", run_script(script, "Bsp3", Bsp3::new(), &mut a)),
        ];
        report(&script.name, &outs)
    }

    /// The script through every 2D tree family.
    pub fn all_2d(script: &Script<Vec2>) -> Outcome {
        let mut a = Answers::new();
        let outs = [
            (
                "Quadtree",
                run_script(script, "Quadtree", Quadtree::new(), &mut a),
            ),
            (
                "LooseQuadtree",
                run_script(script, "LooseQuadtree", LooseQuadtree::new(), &mut a),
            ),
            ("Bsp2", run_script(script, "Bsp2", Bsp2::new(), &mut a)),
        ];
        report(&script.name, &outs)
    }

    // ---- scene makers --------------------------------------------------

    /// The point of a lattice of `side` points per axis with index `i`.
    fn lattice_point<V: Vector>(i: usize, side: usize, origin: f32, step: f32) -> V {
        let mut v = V::ZERO;
        let mut rest = i;
        for a in 0..V::DIM {
            v = v.with(a, origin + (rest % side) as f32 * step);
            rest /= side;
        }
        v
    }

    /// Objects on a lattice of step `s = 2^exp`, sized so that neighbours
    /// touch exactly, face to face (cubes of side `s`, spheres of diameter
    /// `s`), with a few double-size cubes aligned on the lattice, points at
    /// the lattice's corners, flat plates lying on shared faces, and holes.
    /// Every coordinate is exact in `f32`.
    pub fn touching_lattice<V: Vector>(
        seed: u64,
        exp: i32,
        origin_steps: f32,
        side: usize,
    ) -> Script<V> {
        let mut r = rng(seed);
        let s = 2f32.powi(exp);
        let origin = origin_steps * s;
        let n = side.pow(V::DIM as u32);
        let mut bodies = Vec::new();
        let mut corners = Vec::new();
        for i in 0..n {
            let c: V = lattice_point(i, side, origin, s);
            let half = V::splat(s * 0.5);
            let x: f64 = r.random();
            let shape = if x < 0.45 {
                Shape::cuboid(c, half)
            } else if x < 0.8 {
                Shape::sphere(c, s * 0.5)
            } else if x < 0.86 {
                // Side 2s, faces on the faces of the lattice's cubes.
                Shape::cuboid(c + half, V::splat(s))
            } else if x < 0.92 {
                // A point on the corner shared by 2^D cells.
                corners.push(c + half);
                if r.random_bool(0.5) {
                    Shape::sphere(c + half, 0.0)
                } else {
                    Shape::cuboid(c + half, V::ZERO)
                }
            } else if x < 0.96 {
                // A plate lying on the face between this cube and the next.
                let axis = r.random_range(0..V::DIM);
                let c = c.with(axis, c.get(axis) + s * 0.5);
                Shape::cuboid(c, half.with(axis, 0.0))
            } else {
                continue;
            };
            bodies.push(Body::new(shape));
        }
        // A point sphere and a point cube at the same corner.
        for &c in corners.iter().take(8) {
            bodies.push(Body::new(Shape::cuboid(c, V::ZERO)));
        }
        let mut script = Script::still(
            format!(
                "touching lattice {}D, step 2^{exp}, origin {origin}",
                V::DIM
            ),
            bodies.clone(),
        );
        // Every object one step along x: still touching, now as moves.
        for (id, b) in bodies.iter().enumerate() {
            let shift = V::ZERO.with(0, s);
            let shape = match b.shape {
                Shape::Sphere(sp) => Shape::sphere(sp.center + shift, sp.radius),
                Shape::Box(bx) => Shape::Box(Aabb {
                    min: bx.min + shift,
                    max: bx.max + shift,
                }),
            };
            script.ops.push(Op::Update(id as u32, shape));
        }
        script.ops.push(Op::Check("all moved one step".into()));
        script.ops.push(Op::EndFrame);
        script.ops.push(Op::Check("moved, after end_frame".into()));
        script
    }

    pub fn random_in<V: Vector>(r: &mut Rng64, lo: f32, hi: f32) -> V {
        let mut v = V::ZERO;
        for a in 0..V::DIM {
            v = v.with(a, r.random_range(lo..hi));
        }
        v
    }

    /// A sphere or a cube of size (diameter, side) `size`.
    pub fn blob<V: Vector>(r: &mut Rng64, c: V, size: f32) -> Shape<V> {
        if r.random_bool(0.5) {
            Shape::sphere(c, size * 0.5)
        } else {
            Shape::cuboid(c, V::splat(size * 0.5))
        }
    }

    /// 90% objects of size 1 (in small groups, so that they meet), 10%
    /// from 8 to 1000 times larger, and points: zero-size spheres and
    /// zero-size cubes at the very same coordinates, and points on the
    /// faces of unit cubes.
    pub fn mixed_sizes<V: Vector>(seed: u64, n: usize, world: f32) -> Script<V> {
        let mut r = rng(seed);
        let mut bodies = Vec::new();
        while bodies.len() < n {
            if r.random_bool(0.1) {
                let size = 8.0 * 125f32.powf(r.random::<f32>());
                let c = random_in(&mut r, 0.0, world);
                bodies.push(Body::new(blob(&mut r, c, size)));
            } else {
                // A group of up to four unit objects within one unit.
                let c: V = random_in(&mut r, 0.0, world);
                for _ in 0..r.random_range(1..=4) {
                    let p = c + random_in(&mut r, -1.0, 1.0);
                    bodies.push(Body::new(blob(&mut r, p, 1.0)));
                }
            }
        }
        for _ in 0..(n / 100).max(3) {
            let c: V = random_in(&mut r, 0.0, world);
            bodies.push(Body::new(Shape::sphere(c, 0.0)));
            bodies.push(Body::new(Shape::cuboid(c, V::ZERO)));
            // A unit cube with a point on its face.
            let q: V = random_in(&mut r, 0.0, world);
            bodies.push(Body::new(Shape::cuboid(q, V::splat(0.5))));
            let axis = r.random_range(0..V::DIM);
            bodies.push(Body::new(Shape::sphere(
                q.with(axis, q.get(axis) + 0.5),
                0.0,
            )));
        }
        Script::still(format!("mixed sizes {}D, world {world}", V::DIM), bodies)
    }

    /// Shifts a shape.
    fn shifted<V: Vector>(shape: Shape<V>, by: V) -> Shape<V> {
        match shape {
            Shape::Sphere(sp) => Shape::sphere(sp.center + by, sp.radius),
            Shape::Box(bx) => Shape::Box(Aabb {
                min: bx.min + by,
                max: bx.max + by,
            }),
        }
    }

    /// How long a moving scene runs, and the share of its objects removed
    /// and as many inserted each frame.
    pub struct Motion {
        pub frames: usize,
        pub churn: f64,
    }

    /// A moving scene: every object moves a little each frame (`update`),
    /// some are removed and as many inserted, checked with the insertions
    /// queued and built, then `end_frame`. `make` makes a new body.
    pub fn moving<V: Vector>(
        name: String,
        seed: u64,
        bodies: Vec<Body<V>>,
        Motion { frames, churn }: Motion,
        mut velocity: impl FnMut(&mut Rng64) -> V,
        mut make: impl FnMut(&mut Rng64) -> Body<V>,
        mut special: impl FnMut(usize, &mut [(u32, Body<V>)], &mut Vec<Op<V>>),
    ) -> Script<V> {
        let mut r = rng(seed);
        let mut s = Script::new(name);
        let mut live = s.ids(bodies);
        let mut vel: HashMap<u32, V> = HashMap::new();
        s.ops.push(Op::InsertMany(live.clone()));
        s.ops.push(Op::Flush);
        s.ops.push(Op::Check("frame start".into()));
        for frame in 0..frames {
            for (id, b) in live.iter_mut() {
                if b.is_static {
                    continue;
                }
                let v = *vel.entry(*id).or_insert_with(|| velocity(&mut r));
                b.shape = shifted(b.shape, v);
                s.ops.push(Op::Update(*id, b.shape));
            }
            special(frame, &mut live, &mut s.ops);
            let k = (live.len() as f64 * churn) as usize;
            for _ in 0..k {
                let i = r.random_range(0..live.len());
                let (id, _) = live.swap_remove(i);
                s.ops.push(Op::Remove(id));
            }
            for _ in 0..k {
                let b = make(&mut r);
                let (id, b) = s.ids(vec![b])[0];
                live.push((id, b));
                s.ops.push(Op::Insert(id, b));
            }
            if frame % 2 == 0 {
                s.ops
                    .push(Op::Check(format!("frame {frame}, insertions queued")));
                s.ops.push(Op::Flush);
            }
            s.ops.push(Op::Check(format!("frame {frame}")));
            s.ops.push(Op::EndFrame);
            if frame % 3 == 2 {
                s.ops
                    .push(Op::Check(format!("frame {frame}, after end_frame")));
            }
        }
        s
    }

    /// Objects near `+-2^50` and near 0 in one scene: lattices of spheres
    /// and cubes touching exactly at each end (steps of the `f32` spacing
    /// there), unit cubes around 0, and a few boxes spanning the gaps with
    /// faces exactly at 0 and at the lattices.
    pub fn huge_extent<V: Vector>(side: usize) -> Script<V> {
        let mut r = rng(41);
        let big = 2f32.powi(50);
        let step = 2f32.powi(27); // the f32 spacing in [2^50, 2^51)
        let mut bodies = Vec::new();
        let n = side.pow(V::DIM as u32);
        for sign in [1.0f32, -1.0] {
            for i in 0..n {
                let c: V = lattice_point::<V>(i, side, big, step) * sign;
                let shape = match r.random_range(0..4) {
                    0 => Shape::sphere(c, step * 0.5),
                    1 => Shape::cuboid(c, V::splat(step * 0.5)),
                    2 => Shape::sphere(c, 0.0),
                    _ => Shape::cuboid(c, V::splat(step)),
                };
                bodies.push(Body::new(shape));
            }
        }
        for i in 0..n {
            let c: V = lattice_point(i, side, -1.0, 1.0);
            bodies.push(Body::new(blob(&mut r, c, 1.0)));
        }
        // Spanning boxes: from -2^50 to 0, from 0 to 2^50, and a thin one
        // across everything.
        bodies.push(Body::new(Shape::Box(Aabb {
            min: V::splat(-big),
            max: V::ZERO,
        })));
        bodies.push(Body::new(Shape::Box(Aabb {
            min: V::ZERO,
            max: V::splat(big),
        })));
        bodies.push(Body::new(Shape::Box(Aabb {
            min: V::splat(-0.25).with(0, -big * 1.5),
            max: V::splat(0.25).with(0, big * 1.5),
        })));
        Script::still(format!("huge extent {}D, +-2^50 and 0", V::DIM), bodies)
    }

    /// Objects around `1e15` with sizes of a few `f32` steps there
    /// (`2^26`), on and off the representable grid, and coincident points.
    pub fn around_1e15<V: Vector>(seed: u64, n: usize, spread_steps: i32) -> Script<V> {
        let mut r = rng(seed);
        let base = 1e15f32;
        let ulp = 2f32.powi(26);
        let mut bodies = Vec::new();
        for i in 0..n {
            let mut c = V::ZERO;
            for a in 0..V::DIM {
                let x = if i % 2 == 0 {
                    base + r.random_range(-spread_steps..=spread_steps) as f32 * ulp
                } else {
                    // Off the grid: rounded by f32.
                    base + r.random_range(-1.0..1.0f32) * spread_steps as f32 * ulp
                };
                c = c.with(a, x);
            }
            let size = if i % 3 == 0 {
                r.random_range(0..4) as f32 * ulp
            } else {
                r.random_range(0.0..4.0f32) * ulp
            };
            bodies.push(Body::new(blob(&mut r, c, size)));
        }
        let p = V::splat(base);
        for k in 0..10 {
            let shape = if k % 2 == 0 {
                Shape::sphere(p, 0.0)
            } else {
                Shape::cuboid(p, V::ZERO)
            };
            bodies.push(Body::new(shape));
        }
        // Unit spheres and boxes there: points in f32 boxes, paired only
        // where their centres coincide (or the sphere meets the box).
        for k in 0..8 {
            let c = p.with(0, base + (k % 2) as f32 * ulp);
            let shape = if k < 4 {
                Shape::sphere(c, 1.0)
            } else {
                Shape::cuboid(c, V::splat(1.0))
            };
            bodies.push(Body::new(shape));
        }
        Script::still(format!("around 1e15 {}D", V::DIM), bodies)
    }

    /// Objects at the coordinate limit (`MAX_COORDINATE`, `2^60`) and near
    /// 0; the limit itself is accepted, beyond it refused.
    pub fn at_the_limit<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S) -> Script<V> {
        let lim = MAX_COORDINATE;
        assert_eq!(lim, 2f32.powi(60));
        let mut s = make();
        assert!(matches!(
            s.insert(ObjectDesc::new(Shape::sphere(V::splat(lim), 1e12), 0)),
            Err(Error::WorldTooLarge)
        ));
        assert!(
            s.insert(ObjectDesc::new(Shape::sphere(V::splat(lim), 0.0), 0))
                .is_ok()
        );
        let mut r = rng(43);
        let mut bodies = vec![
            Body::new(Shape::sphere(V::splat(lim), 0.0)),
            Body::new(Shape::sphere(V::splat(-lim), 0.0)),
            Body::new(Shape::cuboid(V::splat(lim * 0.5), V::splat(lim * 0.5))),
            Body::new(Shape::cuboid(V::splat(-lim * 0.5), V::splat(lim * 0.5))),
            Body::new(Shape::sphere(V::splat(lim * 0.5), lim * 0.5)),
            Body::new(Shape::sphere(V::ZERO.with(0, lim * 0.75), lim * 0.25)),
            Body::new(Shape::cuboid(V::ZERO, V::splat(lim))),
        ];
        for _ in 0..40 {
            let c: V = random_in(&mut r, -2.0, 2.0);
            bodies.push(Body::new(blob(&mut r, c, 1.0)));
        }
        for _ in 0..20 {
            let c: V = random_in(&mut r, lim * 0.9, lim * 0.999);
            let size = r.random_range(0.0..lim * 0.0018);
            bodies.push(Body::new(blob(&mut r, c, size)));
        }
        Script::still(format!("at the coordinate limit {}D", V::DIM), bodies)
    }
}

use grid_scenes::{Body, Motion, Op, PairList, Script, all_2d, all_3d, blob, random_in};
use rand::Rng;
use sparti::{Bsp2, Bsp3, LayerMatrix, LooseOctree, LooseQuadtree, Shape, SpatialIndex};

#[test]
fn grid_touching_lattice_3d() {
    for (seed, exp, origin) in [
        (1, -4, 0.0),
        (2, 0, -37.0),
        (3, 5, 4096.0),
        (31, -4, 1048576.0),
        (32, 3, -5.0),
    ] {
        let o = all_3d(&grid_scenes::touching_lattice::<Vec3>(
            seed, exp, origin, 10,
        ));
        assert!(o.pairs > 0);
        // Every check's pairs and most queries (those after a build step)
        // ran on the grid.
        assert_eq!(o.grid_checks, o.checks);
        assert!(o.grid_queries > 0 && o.grid_queries < o.queries, "{o:?}");
    }
}

#[test]
fn grid_touching_lattice_2d() {
    for (seed, exp, origin) in [
        (4, -4, 0.0),
        (5, 0, -37.0),
        (6, 5, 4096.0),
        (33, -4, 1048576.0),
        (34, 3, -16.0),
    ] {
        let o = all_2d(&grid_scenes::touching_lattice::<Vec2>(
            seed, exp, origin, 32,
        ));
        assert!(o.pairs > 0);
        // Every check's pairs and most queries (those after a build step)
        // ran on the grid.
        assert_eq!(o.grid_checks, o.checks);
        assert!(o.grid_queries > 0 && o.grid_queries < o.queries, "{o:?}");
    }
}

#[test]
fn grid_mixed_sizes_3d() {
    for (seed, n, world) in [(7, 2000, 1000.0), (8, 1200, 40.0)] {
        let o = all_3d(&grid_scenes::mixed_sizes::<Vec3>(seed, n, world));
        assert!(o.pairs > 0);
        // The big world's grid takes everything; the small world's is
        // crowded (sizes up to 1000 in it) at some or all checks.
        assert_eq!(o.grid_queries == o.queries, world >= 1000.0, "{o:?}");
    }
}

#[test]
fn grid_mixed_sizes_2d() {
    for (seed, n, world) in [(9, 2000, 1000.0), (10, 1200, 100.0)] {
        let o = all_2d(&grid_scenes::mixed_sizes::<Vec2>(seed, n, world));
        assert!(o.pairs > 0);
        // The big world's grid takes everything; the small world's is
        // crowded (sizes up to 1000 in it) at some or all checks.
        assert_eq!(o.grid_queries == o.queries, world >= 1000.0, "{o:?}");
    }
}

/// An object of the flat world: 1e4 x 1e4 x 1.
fn flat_body(r: &mut crate::common::Rng64) -> Body<Vec3> {
    let c = Vec3::new(
        r.random_range(0.0..1e4),
        r.random_range(0.0..1e4),
        r.random_range(0.0..1.0),
    );
    let shape = match r.random_range(0..10) {
        0 => {
            // Large plates.
            let h = r.random_range(100.0..500.0);
            Shape::cuboid(c, Vec3::new(h, r.random_range(100.0..500.0), 0.5))
        }
        1 => Shape::cuboid(c.with_z(0.5), Vec3::new(30.0, 30.0, 0.0)),
        2..=5 => Shape::sphere(c, r.random_range(0.5..30.0)),
        _ => {
            let h = r.random_range(5.0..50.0);
            Shape::cuboid(
                c,
                Vec3::new(h, r.random_range(5.0..50.0), r.random_range(0.0..0.5)),
            )
        }
    };
    Body::new(shape)
}

#[test]
fn grid_flat_world_3d() {
    let mut r = crate::common::rng(11);
    let bodies: Vec<_> = (0..2000).map(|_| flat_body(&mut r)).collect();
    let script = grid_scenes::moving(
        "flat world 1e4 x 1e4 x 1".into(),
        12,
        bodies,
        Motion {
            frames: 3,
            churn: 0.02,
        },
        |r| Vec3::new(r.random_range(-5.0..5.0), r.random_range(-5.0..5.0), 0.0),
        flat_body,
        |_, _, _| {},
    );
    assert!(all_3d(&script).pairs > 0);
}

#[test]
fn grid_huge_coordinates_3d() {
    for o in [
        all_3d(&grid_scenes::huge_extent::<Vec3>(3)),
        all_3d(&grid_scenes::around_1e15::<Vec3>(13, 400, 20)),
        all_3d(&grid_scenes::around_1e15::<Vec3>(14, 2000, 30)),
        all_3d(&grid_scenes::at_the_limit(Octree::<u32>::new)),
    ] {
        assert!(o.pairs > 0);
        assert!(
            o.grid_checks == o.checks && o.grid_queries == o.queries,
            "{o:?}"
        );
    }
}

#[test]
fn grid_huge_coordinates_2d() {
    for o in [
        all_2d(&grid_scenes::huge_extent::<Vec2>(6)),
        all_2d(&grid_scenes::around_1e15::<Vec2>(15, 400, 100)),
        all_2d(&grid_scenes::around_1e15::<Vec2>(16, 2000, 150)),
        all_2d(&grid_scenes::at_the_limit(Quadtree::<u32>::new)),
    ] {
        assert!(o.pairs > 0);
        assert!(
            o.grid_checks == o.checks && o.grid_queries == o.queries,
            "{o:?}"
        );
    }
}

/// `n` objects of size 0.4 to 1 in a cluster `side` wide, and, if asked,
/// outliers 1e7 away (two of them overlapping).
fn cluster<V: Vector>(seed: u64, n: usize, side: f32, outliers: bool) -> Vec<Body<V>> {
    let mut r = crate::common::rng(seed);
    let mut bodies: Vec<Body<V>> = (0..n)
        .map(|_| {
            let c: V = random_in(&mut r, 0.0, side);
            let size = r.random_range(0.4..1.0);
            Body::new(blob(&mut r, c, size))
        })
        .collect();
    if outliers {
        let far = 1e7;
        for c in [
            V::ZERO.with(0, far),
            V::ZERO.with(0, far + 0.5),
            V::ZERO.with(1, -far),
            V::splat(far),
            V::splat(-far).with(0, 5.0),
        ] {
            bodies.push(Body::new(Shape::sphere(c, 1.0)));
        }
    }
    bodies
}

#[test]
fn grid_dense_cluster_with_and_without_outliers_3d() {
    for outliers in [false, true] {
        let name = format!("dense cluster 3D, outliers {outliers}");
        let o = all_3d(&Script::still(
            name,
            cluster::<Vec3>(17, 2000, 10.0, outliers),
        ));
        assert!(o.pairs > 0);
        // The outliers make the grid too coarse for the cluster while they
        // are there: the tree walk answers those checks.
        assert_eq!(o.grid_checks < o.checks, outliers, "{o:?}");
    }
}

#[test]
fn grid_dense_cluster_with_and_without_outliers_2d() {
    for outliers in [false, true] {
        let name = format!("dense cluster 2D, outliers {outliers}");
        let o = all_2d(&Script::still(
            name,
            cluster::<Vec2>(18, 2000, 10.0, outliers),
        ));
        assert!(o.pairs > 0);
        // The outliers make the grid too coarse for the cluster while they
        // are there: the tree walk answers those checks.
        assert_eq!(o.grid_checks < o.checks, outliers, "{o:?}");
    }
}

#[test]
fn grid_identical_objects_at_one_point_3d() {
    let n = 3000;
    let bodies = vec![Body::new(Shape::sphere(Vec3::splat(5.0), 1.0)); n];
    let mut script = Script::once("3000 identical spheres at one point", bodies);
    script.contacts = false;
    script.direct = false;
    let o = all_3d(&script);
    assert_eq!(o.pairs, n * (n - 1) / 2);
    // Far too crowded for the grid: the tree walk answered everything.
    assert_eq!((o.grid_checks, o.grid_queries), (0, 0));
}

#[test]
fn grid_identical_objects_at_one_point_2d() {
    let n = 2000;
    let bodies = vec![Body::new(Shape::cuboid(Vec2::splat(-3.0), Vec2::splat(0.5))); n];
    let mut script = Script::once("2000 identical squares at one point", bodies);
    script.contacts = false;
    script.direct = false;
    let o = all_2d(&script);
    assert_eq!(o.pairs, n * (n - 1) / 2);
    // Far too crowded for the grid: the tree walk answered everything.
    assert_eq!((o.grid_checks, o.grid_queries), (0, 0));
}

/// Moves three objects 1e7 away at frame 4 (the grid then falls back to
/// the tree walk) and back at frame 7.
fn outliers_for_a_while<V: Vector>(
    frame: usize,
    live: &mut [(u32, Body<V>)],
    ops: &mut Vec<Op<V>>,
) {
    let to = match frame {
        4 => Some(1e7),
        7 => Some(0.0),
        _ => None,
    };
    if let Some(x) = to {
        for (k, (id, b)) in live.iter_mut().take(3).enumerate() {
            let c = V::splat(x).with(0, x + k as f32);
            b.shape = blob(&mut crate::common::rng(u64::from(*id)), c, 1.0);
            ops.push(Op::Update(*id, b.shape));
        }
    }
}

fn moving_body<V: Vector>(r: &mut crate::common::Rng64, world: f32) -> Body<V> {
    let c: V = random_in(r, 0.0, world);
    let size = r.random_range(0.3..1.5);
    Body::new(blob(r, c, size))
}

#[test]
fn grid_moving_objects_3d() {
    let mut r = crate::common::rng(19);
    let bodies = (0..1200)
        .map(|_| moving_body::<Vec3>(&mut r, 25.0))
        .collect();
    let script = grid_scenes::moving(
        "moving 3D".into(),
        20,
        bodies,
        Motion {
            frames: 10,
            churn: 0.04,
        },
        |r| random_in(r, -0.4, 0.4),
        |r| moving_body(r, 25.0),
        outliers_for_a_while,
    );
    let o = all_3d(&script);
    assert!(o.pairs > 0);
    // Queries between a change and the next build step walk the tree;
    // after it, they search the grid: both ran.
    assert!(o.grid_queries > 0 && o.grid_queries < o.queries, "{o:?}");
}

#[test]
fn grid_moving_objects_2d() {
    let mut r = crate::common::rng(21);
    let bodies = (0..1200)
        .map(|_| moving_body::<Vec2>(&mut r, 60.0))
        .collect();
    let script = grid_scenes::moving(
        "moving 2D".into(),
        22,
        bodies,
        Motion {
            frames: 10,
            churn: 0.04,
        },
        |r| random_in(r, -0.4, 0.4),
        |r| moving_body(r, 60.0),
        outliers_for_a_while,
    );
    let o = all_2d(&script);
    assert!(o.pairs > 0);
    // Queries between a change and the next build step walk the tree;
    // after it, they search the grid: both ran.
    assert!(o.grid_queries > 0 && o.grid_queries < o.queries, "{o:?}");
}

/// A body with random layers and mask, static with probability `statics`.
fn layered_body<V: Vector>(r: &mut crate::common::Rng64, world: f32, statics: f64) -> Body<V> {
    let mut b = moving_body(r, world);
    b.is_static = r.random_bool(statics);
    b.layer = 1 << r.random_range(0..6);
    if r.random_bool(0.1) {
        b.layer |= 1 << r.random_range(0..6);
    }
    if r.random_bool(0.5) {
        b.mask = r.random_range(0..64u32) | 1;
    }
    b
}

fn layer_matrix() -> LayerMatrix {
    let mut m = LayerMatrix::ALL;
    m.set(0, 1, false);
    m.set(2, 2, false);
    m.set(3, 4, false);
    m.set(5, 0, false);
    m
}

fn static_and_layers<V: Vector>(seed: u64, world: f32) -> Vec<Script<V>> {
    let mut r = crate::common::rng(seed);
    let bodies = (0..1500)
        .map(|_| layered_body::<V>(&mut r, world, 0.3))
        .collect();
    let mut moving = grid_scenes::moving(
        format!("statics, layers, masks and a matrix {}D", V::DIM),
        seed + 1,
        bodies,
        Motion {
            frames: 5,
            churn: 0.03,
        },
        |r| random_in(r, -0.4, 0.4),
        |r| layered_body(r, world, 0.3),
        |_, _, _| {},
    );
    moving.matrix = Some(layer_matrix());
    // Nearly all static: only the few movers pair.
    let bodies = (0..1500)
        .map(|_| layered_body::<V>(&mut r, world, 0.995))
        .collect();
    let mut statics = Script::still(format!("nearly all static {}D", V::DIM), bodies);
    statics.matrix = Some(layer_matrix());
    // No layer collides: no pairs at all.
    let bodies = (0..500)
        .map(|_| layered_body::<V>(&mut r, world, 0.3))
        .collect();
    let mut none = Script::still(format!("matrix NONE {}D", V::DIM), bodies);
    none.matrix = Some(LayerMatrix::NONE);
    vec![moving, statics, none]
}

#[test]
fn grid_static_objects_layers_and_matrix_3d() {
    let outs: Vec<_> = static_and_layers::<Vec3>(23, 30.0)
        .iter()
        .map(all_3d)
        .collect();
    assert!(outs[0].pairs > 0 && outs[1].pairs > 0);
    assert_eq!(outs[2].pairs, 0);
}

#[test]
fn grid_static_objects_layers_and_matrix_2d() {
    let outs: Vec<_> = static_and_layers::<Vec2>(25, 60.0)
        .iter()
        .map(all_2d)
        .collect();
    assert!(outs[0].pairs > 0 && outs[1].pairs > 0);
    assert_eq!(outs[2].pairs, 0);
}

/// The smallest scene found where, with the `rayon` feature, `par_pairs`
/// gives the pairs in another order than `pairs`: 256 unit spheres on a
/// line, the first two overlapping, and two larger overlapping spheres
/// (one grid level up) further along. More than 256 objects make the
/// parallel search two tasks.
fn two_level_line<V: Vector>() -> Vec<Body<V>> {
    let mut bodies: Vec<Body<V>> = (0..256)
        .map(|i| {
            let x = if i == 1 { 0.5 } else { 2.0 * i as f32 };
            Body::new(Shape::sphere(V::ZERO.with(0, x), 0.5))
        })
        .collect();
    for x in [600.0, 603.0] {
        bodies.push(Body::new(Shape::sphere(V::ZERO.with(0, x), 4.0)));
    }
    bodies
}

/// The pairs of `pairs` and of `par_pairs`, as values, in their order.
fn both_orders<V: Vector, S: SpatialIndex<V, u32>>(
    mut s: S,
    bodies: &[Body<V>],
) -> (PairList, PairList) {
    for (i, b) in bodies.iter().enumerate() {
        s.insert(sparti::ObjectDesc::new(b.shape, i as u32))
            .unwrap();
    }
    s.flush();
    s.validate().unwrap();
    let (mut one, mut many) = (Vec::new(), Vec::new());
    s.pairs(&mut one);
    s.par_pairs(&mut many);
    let ids = |v: &[sparti::Pair]| -> Vec<(u32, u32)> {
        v.iter()
            .map(|p| (s.get(p.a).unwrap().value, s.get(p.b).unwrap().value))
            .collect()
    };
    (ids(&one), ids(&many))
}

#[test]
fn grid_par_pairs_same_order_as_pairs_on_two_levels() {
    let b3 = two_level_line::<Vec3>();
    let b2 = two_level_line::<Vec2>();
    let results = [
        ("Octree", both_orders(Octree::<u32>::new(), &b3)),
        ("LooseOctree", both_orders(LooseOctree::<u32>::new(), &b3)),
        ("Bsp3", both_orders(Bsp3::<u32>::new(), &b3)),
        ("Quadtree", both_orders(Quadtree::<u32>::new(), &b2)),
        (
            "LooseQuadtree",
            both_orders(LooseQuadtree::<u32>::new(), &b2),
        ),
        ("Bsp2", both_orders(Bsp2::<u32>::new(), &b2)),
    ];
    let mut wrong = Vec::new();
    for (kind, (one, many)) in &results {
        assert_eq!(one.len(), 2, "{kind}: {one:?}");
        if one != many {
            wrong.push(format!("{kind}: pairs {one:?}, par_pairs {many:?}"));
        }
    }
    assert!(wrong.is_empty(), "another order:\n{}", wrong.join("\n"));
}

/// Degenerate extents: points only, on a plane (no extent along the last
/// axis) with many coincident; all objects at one point (few enough for
/// the grid); a world 1e-37 wide of objects with subnormal sizes.
fn degenerate_scenes<V: Vector>(seed: u64) -> Vec<Script<V>> {
    let mut r = crate::common::rng(seed);
    let flat: Vec<Body<V>> = (0..1500)
        .map(|i| {
            let mut c = V::ZERO;
            for a in 0..V::DIM - 1 {
                c = c.with(a, r.random_range(0..40) as f32);
            }
            Body::new(if i % 2 == 0 {
                Shape::sphere(c, 0.0)
            } else {
                Shape::cuboid(c, V::ZERO)
            })
        })
        .collect();
    let one: Vec<Body<V>> = (0..50)
        .map(|i| {
            let c = V::splat(3.0);
            Body::new(match i % 3 {
                0 => Shape::sphere(c, 0.0),
                1 => Shape::cuboid(c, V::ZERO),
                _ => Shape::sphere(c, 0.25 * (i % 4) as f32),
            })
        })
        .collect();
    let tiny: Vec<Body<V>> = (0..60)
        .map(|_| {
            let c: V = random_in(&mut r, -1e-37, 1e-37);
            let size = r.random_range(0.0..2e-37f32) * [1.0, 1e-3, 0.0][r.random_range(0..3)];
            Body::new(blob(&mut r, c, size))
        })
        .collect();
    vec![
        Script::still(format!("points on a plane {}D", V::DIM), flat),
        Script::still(format!("50 objects at one point {}D", V::DIM), one),
        Script::still(format!("a world 1e-37 wide {}D", V::DIM), tiny),
    ]
}

#[test]
fn grid_degenerate_extents_3d() {
    let outs: Vec<_> = degenerate_scenes::<Vec3>(27).iter().map(all_3d).collect();
    assert!(
        outs.iter().all(|o| o.pairs > 0 && o.grid_queries > 0),
        "{outs:?}"
    );
}

#[test]
fn grid_degenerate_extents_2d() {
    let outs: Vec<_> = degenerate_scenes::<Vec2>(28).iter().map(all_2d).collect();
    assert!(
        outs.iter().all(|o| o.pairs > 0 && o.grid_queries > 0),
        "{outs:?}"
    );
}
