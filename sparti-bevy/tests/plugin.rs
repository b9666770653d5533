//! The plugin in a headless `App`, checked against a brute force over
//! frames with moves, spawns, despawns, removed colliders and bad input:
//! this frame's contacts, the started and stopped messages, and the
//! queries of a read-only system.

use std::collections::BTreeSet;

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::{Vec2, Vec3};
use bevy_transform::TransformPlugin;
use bevy_transform::components::Transform;
use rand::Rng as _;
use sparti::{Aabb, Filter, Shape, Sphere};
use sparti_bevy::{
    Bsp2, Collider, ContactStarted, ContactStopped, Dim, Index, LooseOctree, LooseQuadtree, Octree,
    Quadtree, Sparti, SpartiPlugin, SpatialQuery,
};
use sparti_scenes::{Rng, in_cube};

/// Unordered entity pair.
fn key(a: Entity, b: Entity) -> (Entity, Entity) {
    (a.min(b), a.max(b))
}

/// The live entities' placed shapes and colliders, as the brute force
/// sees them (entities whose transform is not finite keep their last good
/// place, as the plugin promises: `last`).
struct World<V: Dim> {
    last: std::collections::HashMap<Entity, Shape<V>>,
}

impl<V: Dim> World<V> {
    fn shapes(&mut self, app: &mut App) -> Vec<(Entity, Shape<V>, Collider<V>)> {
        let mut q = app
            .world_mut()
            .query::<(Entity, &Collider<V>, &Transform)>();
        let mut out = Vec::new();
        let mut alive = BTreeSet::new();
        for (e, c, t) in q.iter(app.world()) {
            alive.insert(e);
            let shape = c.placed(V::from_translation(t.translation));
            if shape.checked_aabb().is_ok() {
                self.last.insert(e, shape);
            }
            if let Some(&s) = self.last.get(&e) {
                out.push((e, s, *c));
            }
        }
        self.last.retain(|e, _| alive.contains(e));
        out.sort_by_key(|x| x.0);
        out
    }
}

/// Pairs the plugin must report: layers agree, not both static, shapes in
/// contact.
fn expected<V: Dim>(shapes: &[(Entity, Shape<V>, Collider<V>)]) -> BTreeSet<(Entity, Entity)> {
    let mut out = BTreeSet::new();
    for (i, (ea, sa, ca)) in shapes.iter().enumerate() {
        for (eb, sb, cb) in &shapes[i + 1..] {
            if ca.is_static && cb.is_static {
                continue;
            }
            if ca.layer & cb.mask == 0 || cb.layer & ca.mask == 0 {
                continue;
            }
            if sa.contact(sb).is_some() {
                out.insert(key(*ea, *eb));
            }
        }
    }
    out
}

fn translation<V: Dim>(v: V) -> Vec3 {
    let mut t = Vec3::ZERO;
    for i in 0..V::DIM {
        t[i] = v.get(i);
    }
    t
}

fn random_collider<V: Dim>(r: &mut Rng) -> Collider<V> {
    let c = if r.random_bool(0.7) {
        Collider::sphere(r.random_range(0.3..1.5))
    } else {
        Collider::cuboid(V::splat(r.random_range(0.3..1.2)))
    };
    let c = c.with_static(r.random_bool(0.15));
    if r.random_bool(0.2) {
        c.with_layers(0b10, 0b10)
    } else {
        c
    }
}

/// Runs `frames` frames of a scene with `n` entities at first, checking
/// every frame.
fn run<V: Dim, S: Index<V> + Default>(seed: u64, n: usize, frames: usize) {
    let mut r = sparti_scenes::rng(seed);
    let side = (n as f32).powf(1.0 / V::DIM as f32) * 2.5;
    let mut app = App::new();
    app.add_plugins((TransformPlugin, SpartiPlugin::<V, S>::default()));
    for _ in 0..n {
        let p: V = in_cube(&mut r, 0.0, side);
        app.world_mut().spawn((
            Transform::from_translation(translation(p)),
            random_collider::<V>(&mut r),
        ));
    }
    let mut world = World::<V> {
        last: Default::default(),
    };
    let mut previous: BTreeSet<(Entity, Entity)> = BTreeSet::new();
    let mut bad: Option<Entity> = None;
    let (mut total_started, mut total_stopped, mut refused) = (0, 0, 0);
    for frame in 0..frames {
        // The game's part: moves, spawns, despawns, a collider removed,
        // a NaN transform now and then (and its recovery).
        {
            let w = app.world_mut();
            let mut q = w.query::<(Entity, &mut Transform, &Collider<V>)>();
            let mut all: Vec<Entity> = Vec::new();
            for (e, mut t, c) in q.iter_mut(w) {
                all.push(e);
                if !c.is_static && r.random_bool(0.8) {
                    let d: V = in_cube(&mut r, 0.0, 0.6);
                    let step = translation(d - V::splat(0.3));
                    if t.translation.is_finite() {
                        t.translation += step;
                    }
                }
            }
            all.sort();
            if let Some(e) = bad.take() {
                // Back to a valid place.
                if let Some(mut t) = w.get_mut::<Transform>(e) {
                    t.translation = translation(in_cube::<V>(&mut r, 0.0, side));
                }
            } else if frame % 3 == 1 && !all.is_empty() {
                let e = all[r.random_range(0..all.len())];
                w.get_mut::<Transform>(e).unwrap().translation.x = f32::NAN;
                bad = Some(e);
            }
            for _ in 0..r.random_range(0..4) {
                if all.is_empty() {
                    break;
                }
                let e = all.swap_remove(r.random_range(0..all.len()));
                if Some(e) == bad {
                    bad = None;
                }
                if r.random_bool(0.5) {
                    w.despawn(e);
                } else {
                    w.entity_mut(e).remove::<Collider<V>>();
                }
            }
            for _ in 0..r.random_range(0..4) {
                let p: V = in_cube(&mut r, 0.0, side);
                w.spawn((
                    Transform::from_translation(translation(p)),
                    random_collider::<V>(&mut r),
                ));
            }
        }
        app.update();
        let shapes = world.shapes(&mut app);
        let now = expected(&shapes);
        let sparti = app.world().resource::<Sparti<V, S>>();
        sparti.index().validate().expect("valid index");
        assert_eq!(sparti.len(), shapes.len(), "frame {frame}: entities filed");
        refused += sparti.errors().len();
        if let Some(e) = bad {
            assert!(
                sparti.errors().iter().any(|&(x, _)| x == e),
                "frame {frame}: the NaN transform is refused and reported"
            );
        }
        let found: BTreeSet<_> = sparti.contacts().map(|c| key(c.a, c.b)).collect();
        assert_eq!(found, now, "frame {frame}: contacts");
        for c in sparti.contacts() {
            assert!(c.depth >= 0.0 && c.normal.length() > 0.99);
        }
        // Messages: started = now - previous, stopped = previous - now.
        let started: BTreeSet<_> = app
            .world_mut()
            .resource_mut::<Messages<ContactStarted<V>>>()
            .drain()
            .map(|m| key(m.a, m.b))
            .collect();
        let stopped: BTreeSet<_> = app
            .world_mut()
            .resource_mut::<Messages<ContactStopped>>()
            .drain()
            .map(|m| key(m.a, m.b))
            .collect();
        assert_eq!(
            started,
            now.difference(&previous).copied().collect(),
            "frame {frame}: started"
        );
        assert_eq!(
            stopped,
            previous.difference(&now).copied().collect(),
            "frame {frame}: stopped"
        );
        total_started += started.len();
        total_stopped += stopped.len();
        // Queries from a read-only system.
        let centre: V = in_cube(&mut r, 0.0, side);
        let radius = r.random_range(0.5..4.0);
        let (mut near, mut boxed) = app
            .world_mut()
            .run_system_cached_with(
                |In((c, rad)): In<(V, f32)>, q: SpatialQuery<V, S>| {
                    let room = Aabb::new(c - V::splat(rad), c + V::splat(rad)).unwrap();
                    let near: Vec<Entity> = q.within_radius_filtered(c, rad, Filter::ALL).collect();
                    let boxed: Vec<Entity> = q.in_box(&room, Filter::ALL).collect();
                    (near, boxed)
                },
                (centre, radius),
            )
            .unwrap();
        near.sort();
        boxed.sort();
        let room = Aabb::new(centre - V::splat(radius), centre + V::splat(radius)).unwrap();
        let want: Vec<Entity> = shapes
            .iter()
            .filter(|(_, s, _)| s.intersects_aabb(&room))
            .map(|x| x.0)
            .collect();
        assert_eq!(boxed, want, "frame {frame}: box query");
        let ball = Sphere {
            center: centre,
            radius,
        };
        let want: Vec<Entity> = shapes
            .iter()
            .filter(|(_, s, _)| s.intersects_sphere(&ball))
            .map(|x| x.0)
            .collect();
        assert_eq!(near, want, "frame {frame}: radius query");
        let k = app
            .world_mut()
            .run_system_cached_with(
                |In(c): In<V>, q: SpatialQuery<V, S>| {
                    q.nearest_k(c, 3, Filter::ALL).collect::<Vec<_>>()
                },
                centre,
            )
            .unwrap();
        let mut dists: Vec<f32> = shapes
            .iter()
            .map(|(_, s, _)| s.distance_to_point(centre))
            .collect();
        dists.sort_by(f32::total_cmp);
        let got: Vec<f32> = k.iter().map(|x| x.1).collect();
        assert_eq!(got, dists[..dists.len().min(3)], "frame {frame}: 3 nearest");
        previous = now;
    }
    assert!(
        total_started > 0 && total_stopped > 0,
        "the scene has events"
    );
    assert!(refused > 0, "the scene has refused transforms");
}

#[test]
fn quadtree_agrees_with_the_brute_force() {
    run::<Vec2, Quadtree>(1, 300, 40);
}

#[test]
fn loose_quadtree_agrees_with_the_brute_force() {
    run::<Vec2, LooseQuadtree>(2, 300, 40);
}

#[test]
fn bsp_agrees_with_the_brute_force() {
    run::<Vec2, Bsp2>(3, 300, 40);
}

#[test]
fn octree_agrees_with_the_brute_force() {
    run::<Vec3, Octree>(4, 400, 30);
}

#[test]
fn loose_octree_agrees_with_the_brute_force() {
    run::<Vec3, LooseOctree>(5, 400, 30);
}

/// Read-only systems that query the index run in one stage, and see the
/// same answers as the index itself.
#[test]
fn queries_from_parallel_systems() {
    #[derive(Resource, Default)]
    struct Seen(std::sync::Mutex<Vec<usize>>);
    let mut app = App::new();
    app.add_plugins((TransformPlugin, SpartiPlugin::<Vec2, Quadtree>::default()))
        .init_resource::<Seen>();
    for i in 0..50 {
        app.world_mut().spawn((
            Transform::from_xyz(i as f32, 0.0, 0.0),
            Collider::circle(0.4),
        ));
    }
    app.update();
    let a = |q: SpatialQuery<Vec2, Quadtree>, seen: Res<Seen>| {
        seen.0
            .lock()
            .unwrap()
            .push(q.within_radius(Vec2::new(10.0, 0.0), 2.0).len());
    };
    let b = |q: SpatialQuery<Vec2, Quadtree>, seen: Res<Seen>| {
        seen.0
            .lock()
            .unwrap()
            .push(q.within_radius(Vec2::new(20.0, 0.0), 0.5).len());
    };
    app.add_systems(bevy_app::Update, (a, b));
    app.update();
    let mut seen = app.world().resource::<Seen>().0.lock().unwrap().clone();
    seen.sort();
    // Circles at 8..=12 meet the first ball, 20 the second.
    assert_eq!(seen, vec![1, 5]);
}

/// The queries of a frame's systems, after entities moved in the last
/// one, search the index's grid (the contact search's), not the tree,
/// and find what the brute force finds.
#[test]
fn queries_after_moves_search_the_grid() {
    use sparti::SpatialIndex as _;
    #[derive(Resource, Default)]
    struct Seen(Vec<usize>);
    let mut app = App::new();
    app.add_plugins((TransformPlugin, SpartiPlugin::<Vec2, Quadtree>::default()))
        .init_resource::<Seen>();
    let movers: Vec<Entity> = (0..200)
        .map(|i| {
            let at = Vec3::new((i % 20) as f32 * 2.0, (i / 20) as f32 * 2.0, 0.0);
            app.world_mut()
                .spawn((Transform::from_translation(at), Collider::circle(0.6)))
                .id()
        })
        .collect();
    let ask = |q: SpatialQuery<Vec2, Quadtree>, mut seen: ResMut<Seen>| {
        seen.0
            .push(q.within_radius(Vec2::new(10.0, 10.0), 3.0).len());
    };
    app.add_systems(bevy_app::Update, ask);
    for frame in 1..=3 {
        // Everyone steps right, a bit more each frame.
        for &e in &movers {
            let mut t = app.world_mut().get_mut::<Transform>(e).unwrap();
            t.translation.x += 0.25 * frame as f32;
        }
        app.update();
    }
    // The circles (radius 0.6) on the lattice moved `shift` to the right
    // that meet the ball of radius 3 around (10, 10).
    let count = |shift: f32| {
        (0..200)
            .filter(|i| {
                let (x, y) = ((i % 20) as f32 * 2.0 + shift, (i / 20) as f32 * 2.0);
                (x - 10.0).hypot(y - 10.0) <= 3.6
            })
            .count()
    };
    let seen = &app.world().resource::<Seen>().0;
    // Update runs before PostUpdate: each frame's query sees the places
    // the last frame filed (none in the first; then 0.25 and 0.75 to the
    // right of the lattice).
    assert!(count(0.25) > 0 && count(0.25) != count(0.75));
    assert_eq!(*seen, vec![0, count(0.25), count(0.75)]);
    let index = app.world().resource::<Sparti<Vec2, Quadtree>>().index();
    let c = index.counters();
    // Each frame's contact search searched the grid (3); of the queries,
    // the first came before anything was filed, the two after moves
    // searched the grid too (without the plugin's build step after the
    // contacts, they walked the tree: 3 grid searches in all).
    assert_eq!((c.queries, c.grid_searches), (3, 3 + 2));
}

/// An index whose world does not grow (`OutOfBounds::Remove`) evicts an
/// entity that leaves it: the plugin logs it, keeps it out until it comes
/// back inside, and never panics; the other entities go on.
#[test]
fn an_entity_leaving_a_world_that_does_not_grow() {
    use sparti::{Aabb, OrthtreeConfig, OutOfBounds, SpatialIndex};
    fn make() -> Quadtree {
        Quadtree::with_config(OrthtreeConfig {
            world: Some(Aabb::new(Vec2::splat(-10.0), Vec2::splat(10.0)).unwrap()),
            out_of_bounds: OutOfBounds::Remove,
            ..Default::default()
        })
        .unwrap()
    }
    let mut app = App::new();
    app.add_plugins((TransformPlugin, SpartiPlugin::<Vec2, Quadtree>::new(make)));
    let a = app
        .world_mut()
        .spawn((Transform::from_xyz(0.0, 0.0, 0.0), Collider::circle(1.0)))
        .id();
    let b = app
        .world_mut()
        .spawn((Transform::from_xyz(1.5, 0.0, 0.0), Collider::circle(1.0)))
        .id();
    app.update();
    let count = |app: &App| {
        app.world()
            .resource::<Sparti<Vec2, Quadtree>>()
            .contacts()
            .count()
    };
    assert_eq!(count(&app), 1);
    // `b` leaves the world: evicted, no contact; then out of the world it
    // cannot be filed again, which is reported each frame it moves.
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = 50.0;
    app.update();
    assert_eq!(count(&app), 0);
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = 60.0;
    app.update();
    let s = app.world().resource::<Sparti<Vec2, Quadtree>>();
    assert!(s.errors().iter().any(|&(e, _)| e == b), "{:?}", s.errors());
    assert_eq!(s.handle(b), None);
    assert!(s.handle(a).is_some());
    // Back inside: filed again, touching `a` again.
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = 1.5;
    app.update();
    assert_eq!(count(&app), 1);
    app.world()
        .resource::<Sparti<Vec2, Quadtree>>()
        .index()
        .validate()
        .unwrap();
}
