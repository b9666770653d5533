//! A small Bevy game on sparti: a crowd walking in a walled yard, a turret
//! firing projectiles that vanish on what they hit (contact messages), and
//! a guard whose view cone lights up the walkers it sees (a query from a
//! read-only system), unless a wall hides them (a ray).
//!
//! ```text
//! cargo run --release -p sparti-bevy --example guard                       # a window
//! cargo run --release -p sparti-bevy --example guard -- --headless --frames 300 --out guard-out
//! ```
//! Headless, it writes `guard.gif` (every frame) and `last.png` to the
//! folder. Bevy's renderer is not used (it cannot be built here): the
//! window and the pictures are drawn with the workspace's own drawing code
//! (`sparti_cli::demo::render`, `minifb`), one world unit to a pixel.
//! Colours: walkers orange, walkers the guard sees green, projectiles red,
//! walls grey, the guard and its view cone white.

use std::f32::consts::PI;
use std::path::PathBuf;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use bevy_transform::TransformPlugin;
use bevy_transform::components::Transform;
use rand::Rng as _;
use sparti::{Cone, Filter, Ray};
use sparti_bevy::{Collider, ContactStarted, Quadtree, SpartiPlugin, SpatialQuery};
use sparti_cli::demo::render::{BACKGROUND, BULLET, Canvas, DISC, GifWriter, OBSTACLE};

/// The yard, in world units (and pixels).
const W: f32 = 640.0;
const H: f32 = 480.0;
/// Layers: walkers on 1, projectiles on 2, walls on 4. Projectiles hit
/// walkers and walls; walls hide walkers from the guard.
const SOLID: u32 = 1;
const SHOT: u32 = 2;
const WALL: u32 = 4;
const SEEN: u32 = 0x40_E0_40;
const GUARD: u32 = 0xFF_FF_FF;

#[derive(Component)]
struct Walker {
    vel: Vec2,
    seen: bool,
}

#[derive(Component)]
struct Projectile {
    vel: Vec2,
}

/// The guard: where it stands and where it looks.
#[derive(Resource)]
struct Guard {
    at: Vec2,
    angle: f32,
}

/// What the game counts.
#[derive(Resource, Default)]
struct Tally {
    frame: u64,
    hits: u64,
    seen: usize,
}

#[derive(Resource)]
struct Dice(sparti_scenes::Rng);

/// The guard's view cone this frame.
fn cone(g: &Guard) -> Cone<Vec2> {
    Cone::new(g.at, Vec2::from_angle(g.angle), PI / 8.0, 260.0).expect("a valid cone")
}

fn setup(mut commands: Commands, mut dice: ResMut<Dice>) {
    let r = &mut dice.0;
    for _ in 0..400 {
        let p = Vec2::new(
            r.random_range(20.0..W - 20.0),
            r.random_range(20.0..H - 20.0),
        );
        let v = Vec2::from_angle(r.random_range(0.0..2.0 * PI)) * r.random_range(0.3..1.5);
        commands.spawn((
            Transform::from_xyz(p.x, p.y, 0.0),
            Collider::circle(r.random_range(3.0..6.0)).with_layers(SOLID, u32::MAX),
            Walker {
                vel: v,
                seen: false,
            },
        ));
    }
    for (x, y, hx, hy) in [(200.0, 150.0, 60.0, 8.0), (450.0, 330.0, 8.0, 70.0)] {
        commands.spawn((
            Transform::from_xyz(x, y, 0.0),
            Collider::rect(Vec2::new(hx, hy))
                .with_layers(WALL, u32::MAX)
                .with_static(true),
        ));
    }
}

fn walk(mut walkers: Query<(&mut Transform, &mut Walker)>) {
    for (mut t, mut w) in &mut walkers {
        let mut p = t.translation.truncate() + w.vel;
        if !(5.0..=W - 5.0).contains(&p.x) {
            w.vel.x = -w.vel.x;
            p.x = p.x.clamp(5.0, W - 5.0);
        }
        if !(5.0..=H - 5.0).contains(&p.y) {
            w.vel.y = -w.vel.y;
            p.y = p.y.clamp(5.0, H - 5.0);
        }
        t.translation = p.extend(0.0);
    }
}

/// The turret in the yard's corner fires every fourth frame.
fn fire(mut commands: Commands, mut dice: ResMut<Dice>, tally: Res<Tally>) {
    if !tally.frame.is_multiple_of(4) {
        return;
    }
    let a = dice.0.random_range(0.05..PI / 2.0 - 0.05);
    commands.spawn((
        Transform::from_xyz(4.0, 4.0, 0.0),
        Collider::circle(2.0).with_layers(SHOT, SOLID | WALL),
        Projectile {
            vel: Vec2::from_angle(a) * 6.0,
        },
    ));
}

fn fly(mut commands: Commands, mut shots: Query<(Entity, &mut Transform, &Projectile)>) {
    for (e, mut t, s) in &mut shots {
        t.translation += s.vel.extend(0.0);
        if !(0.0..=W).contains(&t.translation.x) || !(0.0..=H).contains(&t.translation.y) {
            commands.entity(e).despawn();
        }
    }
}

/// A projectile vanishes on the first thing it touches (the contact
/// messages of the last frame's search).
fn hit(
    mut commands: Commands,
    mut started: MessageReader<ContactStarted<Vec2>>,
    shots: Query<(), With<Projectile>>,
    mut tally: ResMut<Tally>,
) {
    for c in started.read() {
        for e in [c.a, c.b] {
            if shots.contains(e) && commands.get_entity(e).is_ok() {
                commands.entity(e).try_despawn();
                tally.hits += 1;
            }
        }
    }
}

/// The guard turns and looks: the walkers in its view cone, unless a
/// wall stands in between (a ray to each). Queries from a system that
/// only reads the index.
fn look(
    mut guard: ResMut<Guard>,
    q: SpatialQuery<Vec2, Quadtree>,
    mut walkers: Query<(&Transform, &mut Walker)>,
    mut tally: ResMut<Tally>,
) {
    guard.angle += 0.01;
    for (_, mut w) in &mut walkers {
        w.seen = false;
    }
    let in_view = q.in_cone(&cone(&guard), Filter::layers(SOLID));
    tally.seen = 0;
    for e in in_view {
        let Ok((t, mut w)) = walkers.get_mut(e) else {
            continue;
        };
        let to = t.translation.truncate() - guard.at;
        let hidden = Ray::new(guard.at, to)
            .ok()
            .and_then(|ray| q.ray_nearest(&ray, to.length(), Filter::layers(WALL)))
            .is_some();
        if !hidden {
            w.seen = true;
            tally.seen += 1;
        }
    }
    tally.frame += 1;
}

fn draw(world: &mut World, canvas: &mut Canvas) {
    canvas.clear(BACKGROUND);
    let mut q = world.query::<(
        &Transform,
        &Collider<Vec2>,
        Option<&Walker>,
        Option<&Projectile>,
    )>();
    for (t, c, walker, shot) in q.iter(world) {
        let p = t.translation.truncate();
        match c.placed(p) {
            sparti::Shape::Sphere(s) => {
                let colour = match (walker, shot) {
                    (Some(w), _) if w.seen => SEEN,
                    (_, Some(_)) => BULLET,
                    _ => DISC,
                };
                canvas.fill_disc(s.center.x, s.center.y, s.radius, colour);
            }
            sparti::Shape::Box(b) => canvas.fill_rect(b.min.x, b.min.y, b.max.x, b.max.y, OBSTACLE),
        }
    }
    let g = world.resource::<Guard>();
    let c = cone(g);
    canvas.fill_disc(g.at.x, g.at.y, 6.0, GUARD);
    for side in [-1.0, 1.0] {
        let d = Vec2::from_angle(g.angle + side * c.half_angle);
        for i in 0..260 {
            let p = g.at + d * i as f32;
            canvas.put(p.x as i64, p.y as i64, GUARD);
        }
    }
}

fn app(seed: u64) -> App {
    let mut app = App::new();
    app.add_plugins((TransformPlugin, SpartiPlugin::<Vec2, Quadtree>::default()))
        .insert_resource(Dice(sparti_scenes::rng(seed)))
        .insert_resource(Guard {
            at: Vec2::new(W / 2.0, H / 2.0),
            angle: 0.0,
        })
        .init_resource::<Tally>()
        .add_systems(bevy_app::Startup, setup)
        .add_systems(Update, (walk, fire, fly, hit, look));
    app
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name);
    let value = |name: &str| flag(name).and_then(|i| args.get(i + 1)).cloned();
    let headless = flag("--headless").is_some();
    let frames: Option<u64> = value("--frames").and_then(|s| s.parse().ok());
    let out = PathBuf::from(value("--out").unwrap_or_else(|| "guard-out".into()));
    let mut app = app(1);
    let mut canvas = Canvas::new(W as usize, H as usize);
    let report = |app: &App| {
        let t = app.world().resource::<Tally>();
        let n = app
            .world()
            .resource::<sparti_bevy::Sparti<Vec2, Quadtree>>()
            .len();
        println!(
            "frame {:4}: {n} colliders, the guard sees {:3}, {} projectiles stopped so far",
            t.frame, t.seen, t.hits
        );
    };
    if headless {
        let frames = frames.unwrap_or(300);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut gif = GifWriter::create(&out.join("guard.gif"), W as usize, H as usize, 3)?;
        for f in 0..frames {
            app.update();
            draw(app.world_mut(), &mut canvas);
            gif.add(&canvas)?;
            if f % 60 == 0 {
                report(&app);
            }
        }
        report(&app);
        canvas.save_png(&out.join("last.png"))?;
        println!("wrote {}/guard.gif and last.png", out.display());
        return Ok(());
    }
    let mut window = minifb::Window::new(
        "sparti + Bevy: the guard (Esc quits)",
        W as usize,
        H as usize,
        minifb::WindowOptions::default(),
    )
    .map_err(|e| format!("no window ({e}); try --headless"))?;
    window.set_target_fps(60);
    let mut f = 0;
    while window.is_open()
        && !window.is_key_down(minifb::Key::Escape)
        && frames.is_none_or(|n| f < n)
    {
        app.update();
        draw(app.world_mut(), &mut canvas);
        window
            .update_with_buffer(&canvas.pixels, W as usize, H as usize)
            .map_err(|e| e.to_string())?;
        if f % 60 == 0 {
            report(&app);
        }
        f += 1;
    }
    Ok(())
}
