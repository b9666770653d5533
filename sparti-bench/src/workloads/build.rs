//! The bulk build workloads (`build3d`, `build2d`): `insert_many` +
//! `flush` (or the peer's bulk load) of static boxes, checked by box
//! queries.

use std::time::Instant;

use sparti::glam::{Vec2, Vec3};
use sparti::{Aabb, Filter, ObjectDesc, Shape, SpatialIndex, Vector};
use sparti_cli::catalogue::{Config, IndexJob};

use crate::pairs::Dim;
use crate::report::{Report, Row};
use crate::{Plan, SPARTI, median, scene, sparti_name, world_of};

/// Reps of a build: median of these.
fn build_reps(plan: &Plan, n: usize) -> usize {
    match (plan.quick, n >= 1_000_000) {
        (true, _) => 3,
        (false, true) => 3,
        (false, false) => 5,
    }
}

fn build_sizes(plan: &Plan) -> Vec<usize> {
    if plan.quick {
        vec![100_000]
    } else {
        vec![100_000, 1_000_000]
    }
}

/// Check queries for a build: the number of (object, query) box overlaps
/// over 100 cubes of side 16, equal for every structure.
fn check_boxes<V: Vector>(n: usize) -> Vec<Aabb<V>> {
    let side = scene::side(V::DIM, n);
    (0..100)
        .map(|k| {
            let f = (k as f32 + 0.5) / 100.0;
            let mut c = V::ZERO;
            for i in 0..V::DIM {
                c = c.with(i, side * ((f * (i as f32 * 7.0 + 3.0)).fract()));
            }
            Aabb {
                min: c - V::splat(8.0),
                max: c + V::splat(8.0),
            }
        })
        .collect()
}

/// Times `insert_many` + `flush` of a sparti structure built by the
/// catalogue; gives ms and the check count.
struct TimedBuild<'a, V: Vector> {
    boxes: &'a [Aabb<V>],
    checks: &'a [Aabb<V>],
}

impl<V: Vector> IndexJob<V, u32> for TimedBuild<'_, V> {
    type Output = (f64, usize);
    fn run<S: SpatialIndex<V, u32> + 'static>(self, mut index: S) -> (f64, usize) {
        let descs: Vec<ObjectDesc<V, u32>> = self
            .boxes
            .iter()
            .enumerate()
            .map(|(i, b)| ObjectDesc::new(Shape::Box(*b), i as u32))
            .collect();
        let t = Instant::now();
        index.insert_many(descs).expect("valid boxes");
        index.flush();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut out = Vec::new();
        let mut count = 0;
        for c in self.checks {
            index.query_aabb(c, Filter::ALL, &mut out);
            count += out.len();
        }
        (ms, count)
    }
}

type BuildFn<V> = Box<dyn Fn(&[Aabb<V>], &[Aabb<V>]) -> (f64, usize)>;

fn run_builds<V: Vector>(
    workload: &str,
    plan: &Plan,
    rep: &mut Report,
    impls: Vec<(&'static str, bool, BuildFn<V>)>,
) {
    for n in build_sizes(plan) {
        let boxes = scene::boxes::<V>(n);
        let checks = check_boxes::<V>(n);
        let mut reference: Option<(&str, usize)> = None;
        for (name, is_sparti, f) in &impls {
            let mut samples = Vec::new();
            let mut count = 0;
            for _ in 0..build_reps(plan, n) {
                let (ms, c) = f(&boxes, &checks);
                samples.push(ms);
                count = c;
            }
            let m = median(&samples);
            eprintln!("{workload} N={n} {name}: {m:.2} ms ({count} check overlaps)");
            rep.push(Row {
                workload: workload.into(),
                n,
                name: (*name).into(),
                sparti: *is_sparti,
                oracle: false,
                unit: "ms",
                higher_is_better: false,
                samples,
                check: format!("{count} check overlaps"),
                extra: Vec::new(),
            });
            match reference {
                None => reference = Some((name, count)),
                Some((r, rc)) if rc != count => rep.fail(format!(
                    "{workload} N={n}: {name} finds {count} check overlaps, {r} {rc}"
                )),
                _ => {}
            }
        }
    }
}

/// sparti's three families (the catalogue's, world preset): the build
/// entries of both dimensions.
fn sparti_builds<V: Vector>() -> Vec<(&'static str, bool, BuildFn<V>)> {
    SPARTI[..3]
        .iter()
        .map(|&s| -> (&'static str, bool, BuildFn<V>) {
            (
                sparti_name::<V>(s),
                true,
                Box::new(move |boxes, checks| {
                    Config::default_of(s)
                        .build(
                            Some(world_of::<V>(boxes.len())),
                            TimedBuild { boxes, checks },
                        )
                        .expect("valid configuration")
                }),
            )
        })
        .collect()
}

/// rstar's bulk load, in either dimension.
fn rstar_build<V: Dim>() -> (&'static str, bool, BuildFn<V>) {
    (
        "rstar",
        false,
        Box::new(|b, c| {
            let items: Vec<_> = b
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    rstar::primitives::GeomWithData::new(
                        rstar::primitives::Rectangle::from_corners(x.min.p(), x.max.p()),
                        i as u32,
                    )
                })
                .collect();
            let t = Instant::now();
            let tree = rstar::RTree::bulk_load(items);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let count = c
                .iter()
                .map(|q| {
                    tree.locate_in_envelope_intersecting(rstar::AABB::from_corners(
                        q.min.p(),
                        q.max.p(),
                    ))
                    .count()
                })
                .sum();
            (ms, count)
        }),
    )
}

pub fn build3d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_builds::<Vec3>();
    impls.extend::<[(&'static str, bool, BuildFn<Vec3>); 3]>([
        (
            "parry3d Bvh",
            false,
            Box::new(|b, c| {
                let pv = |v: Vec3| parry3d::math::Vector::new(v.x, v.y, v.z);
                let leaves: Vec<_> = b
                    .iter()
                    .map(|x| parry3d::bounding_volume::Aabb::new(pv(x.min), pv(x.max)))
                    .collect();
                let t = Instant::now();
                let bvh = parry3d::partitioning::Bvh::from_leaves(
                    parry3d::partitioning::BvhBuildStrategy::Binned,
                    &leaves,
                );
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let count = c
                    .iter()
                    .map(|q| {
                        bvh.intersect_aabb(&parry3d::bounding_volume::Aabb::new(
                            pv(q.min),
                            pv(q.max),
                        ))
                        .count()
                    })
                    .sum();
                (ms, count)
            }),
        ),
        rstar_build(),
        (
            "bvh",
            false,
            Box::new(|b, c| {
                let mut shapes: Vec<_> = b
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let mut s = crate::pairs::bvh_shape(Vec3::ZERO, 0.0, i as u32);
                        s.aabb = bvh::aabb::Aabb::with_bounds(
                            crate::pairs::na_point(x.min),
                            crate::pairs::na_point(x.max),
                        );
                        s
                    })
                    .collect();
                let t = Instant::now();
                let tree = bvh::bvh::Bvh::build(&mut shapes);
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let count = c
                    .iter()
                    .map(|q| {
                        let q = bvh::aabb::Aabb::with_bounds(
                            crate::pairs::na_point(q.min),
                            crate::pairs::na_point(q.max),
                        );
                        tree.traverse(&q, &shapes).len()
                    })
                    .sum();
                (ms, count)
            }),
        ),
    ]);
    run_builds("build3d", plan, rep, impls);
}

pub fn build2d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_builds::<Vec2>();
    impls.extend::<[(&'static str, bool, BuildFn<Vec2>); 2]>([
        (
            "broccoli",
            false,
            Box::new(|b, c| {
                let mut rects: Vec<(broccoli::axgeom::Rect<f32>, u32)> = b
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (broccoli::rect(x.min.x, x.max.x, x.min.y, x.max.y), i as u32))
                    .collect();
                let t = Instant::now();
                let tree = broccoli::Tree::new(&mut rects);
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(tree);
                // broccoli's rectangle query borrows the tree mutably per
                // query; the check counts overlaps on the tree's own element
                // order (every element is still there, reordered).
                let count = c
                    .iter()
                    .map(|q| {
                        rects
                            .iter()
                            .filter(|(r, _)| {
                                r.x.start <= q.max.x
                                    && q.min.x <= r.x.end
                                    && r.y.start <= q.max.y
                                    && q.min.y <= r.y.end
                            })
                            .count()
                    })
                    .sum();
                (ms, count)
            }),
        ),
        rstar_build(),
    ]);
    run_builds("build2d", plan, rep, impls);
}
