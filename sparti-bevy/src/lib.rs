//! # sparti in a Bevy app
//!
//! [`SpartiPlugin`] keeps every entity that has a [`Collider`] (and a
//! transform) in a sparti spatial index of your choice, 2D or 3D. Each
//! frame, in [`PostUpdate`] after Bevy's transform propagation, it
//!
//! 1. files new colliders, moves the entities whose transform or collider
//!    changed (one batch, [`sparti::SpatialIndex::update_many`]), and takes
//!    despawned entities (and removed colliders) out of the index
//!    ([`SpartiSystems::Sync`]);
//! 2. finds the frame's contacts with one pair search, and sends
//!    [`ContactStarted`] (with the contact record: point, normal, depth)
//!    and [`ContactStopped`] messages ([`SpartiSystems::Contacts`]). The
//!    index's grid, which that search brings up to date, then serves every
//!    query until the next frame's changes.
//!
//! Read-only systems ask the index through the [`SpatialQuery`] system
//! parameter (radius, box, ray, view cone, k nearest, this frame's
//! contacts). It only reads, so Bevy runs such systems in parallel with
//! each other.
//!
//! Bevy 0.20 is built on glam 0.33; sparti's feature `glam033`, which this
//! crate turns on, makes sparti accept `bevy::math::Vec2` and `Vec3` as
//! they are. The index types are sparti's, over Bevy's vectors, holding
//! the entity as each object's value: [`Quadtree`], [`Octree`],
//! [`LooseQuadtree`], [`LooseOctree`], [`Bsp2`], [`Bsp3`].
//!
//! # Example
//! ```
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use bevy_math::Vec2;
//! use bevy_transform::{TransformPlugin, components::Transform};
//! use sparti_bevy::{Collider, ContactStarted, Quadtree, SpartiPlugin, SpatialQuery};
//!
//! let mut app = App::new();
//! app.add_plugins((TransformPlugin, SpartiPlugin::<Vec2, Quadtree>::default()));
//! let a = app.world_mut().spawn((Transform::from_xyz(0.0, 0.0, 0.0), Collider::circle(1.0))).id();
//! let b = app.world_mut().spawn((Transform::from_xyz(1.5, 0.0, 0.0), Collider::circle(1.0))).id();
//! app.update();
//!
//! // The contact, as a message (read here from the world; a system would
//! // take a `MessageReader<ContactStarted<Vec2>>`).
//! let started: Vec<_> = app
//!     .world_mut()
//!     .resource_mut::<Messages<ContactStarted<Vec2>>>()
//!     .drain()
//!     .collect();
//! assert_eq!((started[0].a, started[0].b, started[0].depth), (a, b, 0.5));
//!
//! // A query from a system.
//! let near = app
//!     .world_mut()
//!     .run_system_cached(|q: SpatialQuery<Vec2, Quadtree>| {
//!         q.within_radius(Vec2::new(-2.0, 0.0), 1.5).collect::<Vec<_>>()
//!     })
//!     .unwrap();
//! assert_eq!(near, vec![a]);
//! ```
//!
//! # Bad input
//! A collider or transform that sparti refuses (a NaN translation, a
//! negative radius, coordinates beyond [`sparti::MAX_COORDINATE`]) is
//! logged with the entity and the reason (`log::error!`), kept in
//! [`Sparti::errors`] for the frame, and changes nothing else: a moving
//! entity keeps its last good place, a new one is filed once its collider
//! is valid, and every other entity's move of the frame is applied.

use core::marker::PhantomData;
use std::collections::HashMap;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;
use bevy_math::{Vec2, Vec3};
use bevy_transform::TransformSystems;
use bevy_transform::components::{GlobalTransform, Transform};
use sparti::{
    Aabb, Cone, Contact, ContactEvents, Error, Filter, Handle, ObjectDesc, Pair, Ray, RayHit,
    Shape, SpatialIndex, Vector,
};

/// The quadtree, over Bevy's `Vec2`, holding entities.
pub type Quadtree = sparti::Orthtree<Vec2, Entity>;
/// The octree, over Bevy's `Vec3`, holding entities.
pub type Octree = sparti::Orthtree<Vec3, Entity>;
/// The loose quadtree, over Bevy's `Vec2`, holding entities.
pub type LooseQuadtree = sparti::LooseOrthtree<Vec2, Entity>;
/// The loose octree, over Bevy's `Vec3`, holding entities.
pub type LooseOctree = sparti::LooseOrthtree<Vec3, Entity>;
/// The 2D BSP, over Bevy's `Vec2`, holding entities.
pub type Bsp2 = sparti::Bsp<Vec2, Entity>;
/// The 3D BSP, over Bevy's `Vec3`, holding entities.
pub type Bsp3 = sparti::Bsp<Vec3, Entity>;

/// Bevy's `Vec2` (2D games: the translation's `x` and `y`) or `Vec3`.
pub trait Dim: Vector {
    /// The point of this dimension at a transform's translation.
    fn from_translation(t: Vec3) -> Self;
}

impl Dim for Vec2 {
    fn from_translation(t: Vec3) -> Self {
        t.truncate()
    }
}

impl Dim for Vec3 {
    fn from_translation(t: Vec3) -> Self {
        t
    }
}

/// A sparti structure the plugin can keep: any [`SpatialIndex`] of
/// entities that threads can share.
pub trait Index<V: Dim>: SpatialIndex<V, Entity> + Send + Sync + 'static {}

impl<V: Dim, S: SpatialIndex<V, Entity> + Send + Sync + 'static> Index<V> for S {}

/// An entity's collision shape, around its origin: the plugin places it
/// at the entity's translation each frame (rotation and scale are not
/// applied). Entities whose layers do not collide are never paired (the
/// Box2D rule: `a.layer & b.mask != 0` and `b.layer & a.mask != 0`);
/// static entities are never paired with each other.
///
/// # Example
/// ```
/// use bevy_math::{Vec2, Vec3};
/// use sparti_bevy::Collider;
/// let wall = Collider::rect(Vec2::new(10.0, 0.5)).with_static(true);
/// let bullet = Collider::<Vec3>::sphere(0.1).with_layers(0b10, 0b01);
/// assert!(wall.is_static && bullet.mask == 0b01);
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[require(Transform)]
pub struct Collider<V: Dim> {
    /// The shape, in the entity's frame (centred on its origin for the
    /// constructors below).
    pub shape: Shape<V>,
    /// The layers the entity is on. Default 1.
    pub layer: u32,
    /// The layers it collides with. Default all.
    pub mask: u32,
    /// Static entities are never tested against each other. Default false.
    pub is_static: bool,
}

impl<V: Dim> Collider<V> {
    /// A collider of any shape, on layer 1, colliding with every layer.
    pub fn new(shape: Shape<V>) -> Self {
        Self {
            shape,
            layer: 1,
            mask: u32::MAX,
            is_static: false,
        }
    }

    /// A ball (a circle in 2D) of this radius around the origin.
    pub fn sphere(radius: f32) -> Self {
        Self::new(Shape::sphere(V::ZERO, radius))
    }

    /// A box of these half extents around the origin.
    pub fn cuboid(half_extents: V) -> Self {
        Self::new(Shape::cuboid(V::ZERO, half_extents))
    }

    /// These layers and mask.
    pub fn with_layers(mut self, layer: u32, mask: u32) -> Self {
        self.layer = layer;
        self.mask = mask;
        self
    }

    /// Static or not.
    pub fn with_static(mut self, is_static: bool) -> Self {
        self.is_static = is_static;
        self
    }

    /// The shape placed at `at`.
    pub fn placed(&self, at: V) -> Shape<V> {
        self.shape.translated(at)
    }
}

impl Collider<Vec2> {
    /// A circle of this radius around the origin (2D).
    pub fn circle(radius: f32) -> Self {
        Self::sphere(radius)
    }

    /// A rectangle of these half extents around the origin (2D).
    pub fn rect(half_extents: Vec2) -> Self {
        Self::cuboid(half_extents)
    }
}

/// Two entities that began touching this frame, with the contact record
/// of this frame's search. `a` is the entity filed first (the pair's
/// order is stable for as long as both live).
#[derive(Message, Clone, Copy, Debug, PartialEq)]
pub struct ContactStarted<V: Dim> {
    /// One entity.
    pub a: Entity,
    /// The other.
    pub b: Entity,
    /// A point in the overlap.
    pub point: V,
    /// Unit normal from `a` towards `b`.
    pub normal: V,
    /// Penetration depth (0 when touching).
    pub depth: f32,
}

/// Two entities that touched in the last frame and no longer do (one of
/// them may have been despawned).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContactStopped {
    /// One entity.
    pub a: Entity,
    /// The other.
    pub b: Entity,
}

/// The plugin's systems, in [`PostUpdate`] after Bevy's
/// `TransformSystems::Propagate`, in this order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpartiSystems {
    /// New, moved and removed colliders into the index.
    Sync,
    /// The frame's contacts and the contact messages.
    Contacts,
}

/// The index and what the plugin keeps beside it: which entity is which
/// object, this frame's contacts and refusals.
#[derive(Resource)]
pub struct Sparti<V: Dim, S: Index<V>> {
    index: S,
    handles: EntityHashMap<Handle>,
    /// Objects removed this frame, for the stopped messages.
    gone: HashMap<Handle, Entity>,
    /// This frame's contacts, sorted by pair.
    contacts: Vec<Contact<V>>,
    events: ContactEvents,
    errors: Vec<(Entity, Error)>,
    moves: Vec<(Handle, Shape<V>)>,
    movers: Vec<Entity>,
}

impl<V: Dim, S: Index<V>> Sparti<V, S> {
    /// The plugin's state around an empty index.
    pub fn new(index: S) -> Self {
        Self {
            index,
            handles: EntityHashMap::default(),
            gone: HashMap::new(),
            contacts: Vec::new(),
            events: ContactEvents::new(),
            errors: Vec::new(),
            moves: Vec::new(),
            movers: Vec::new(),
        }
    }

    /// The index, for anything [`SpatialQuery`] does not offer (its values
    /// are the entities).
    pub fn index(&self) -> &S {
        &self.index
    }

    /// The index's object of an entity.
    pub fn handle(&self, entity: Entity) -> Option<Handle> {
        self.handles.get(&entity).copied()
    }

    /// The entity of an index object.
    pub fn entity(&self, handle: Handle) -> Option<Entity> {
        self.index.get(handle).ok().map(|o| o.value)
    }

    /// Entities in the index.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// True when no entity is in the index.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// The colliders refused this frame, with the reason (each was also
    /// logged).
    pub fn errors(&self) -> &[(Entity, Error)] {
        &self.errors
    }

    /// This frame's contacts, as entities, sorted by the index's order of
    /// the pairs.
    pub fn contacts(&self) -> impl Iterator<Item = ContactStarted<V>> + '_ {
        self.contacts.iter().filter_map(|c| self.record(c))
    }

    /// A contact in entities (`None` for an object no longer there).
    fn record(&self, c: &Contact<V>) -> Option<ContactStarted<V>> {
        Some(ContactStarted {
            a: self.entity(c.a)?,
            b: self.entity(c.b)?,
            point: c.point,
            normal: c.normal,
            depth: c.depth,
        })
    }

    /// The entity of an object, this frame's removed ones included.
    fn entity_or_gone(&self, h: Handle) -> Option<Entity> {
        self.entity(h).or_else(|| self.gone.get(&h).copied())
    }

    /// Logs and keeps a refusal.
    fn refuse(&mut self, entity: Entity, what: &str, err: Error) {
        log::error!("sparti: entity {entity} {what}: {err}");
        self.errors.push((entity, err));
    }

    /// Files a new collider.
    fn insert(&mut self, entity: Entity, collider: &Collider<V>, shape: Shape<V>) {
        let desc = ObjectDesc {
            shape,
            value: entity,
            layer: collider.layer,
            mask: collider.mask,
            is_static: collider.is_static,
        };
        match self.index.insert(desc) {
            Ok(h) => {
                self.handles.insert(entity, h);
            }
            Err(err) => self.refuse(entity, "not added to the index", err),
        }
    }

    /// Takes an entity's object out of the index.
    fn remove(&mut self, entity: Entity) {
        if let Some(h) = self.handles.remove(&entity)
            && self.index.remove(h).is_ok()
        {
            self.gone.insert(h, entity);
        }
    }
}

/// Keeps the entities with a [`Collider`] in a sparti index of type `S`
/// over `V` (Bevy's `Vec2` or `Vec3`): the [`Sparti`] resource, the
/// systems of [`SpartiSystems`] and the contact messages. Needs Bevy's
/// `TransformPlugin` (part of `DefaultPlugins`).
pub struct SpartiPlugin<V: Dim, S: Index<V>> {
    make: fn() -> S,
    _dim: PhantomData<fn() -> V>,
}

impl<V: Dim, S: Index<V>> SpartiPlugin<V, S> {
    /// The plugin with the index `make` returns (for a configured index:
    /// `SpartiPlugin::new(|| Octree::with_config(config).unwrap())`).
    pub fn new(make: fn() -> S) -> Self {
        Self {
            make,
            _dim: PhantomData,
        }
    }
}

impl<V: Dim, S: Index<V> + Default> Default for SpartiPlugin<V, S> {
    fn default() -> Self {
        Self::new(S::default)
    }
}

impl<V: Dim, S: Index<V>> Plugin for SpartiPlugin<V, S> {
    fn build(&self, app: &mut App) {
        app.insert_resource(Sparti::<V, S>::new((self.make)()))
            .add_message::<ContactStarted<V>>()
            .add_message::<ContactStopped>()
            .configure_sets(
                PostUpdate,
                (SpartiSystems::Sync, SpartiSystems::Contacts)
                    .chain()
                    .after(TransformSystems::Propagate),
            )
            .add_systems(
                PostUpdate,
                (
                    sync::<V, S>.in_set(SpartiSystems::Sync),
                    find_contacts::<V, S>.in_set(SpartiSystems::Contacts),
                ),
            );
    }
}

/// The colliders whose entity moved or whose collider changed (new ones
/// too), with their entity and its transform.
type ChangedColliders<'w, 's, V> = Query<
    'w,
    's,
    (Entity, Ref<'static, Collider<V>>, &'static GlobalTransform),
    Or<(Changed<Collider<V>>, Changed<GlobalTransform>)>,
>;

/// [`SpartiSystems::Sync`]: removals, then new colliders and moves (one
/// batch), then the index's build step.
fn sync<V: Dim, S: Index<V>>(
    mut sparti: ResMut<Sparti<V, S>>,
    mut removed: RemovedComponents<Collider<V>>,
    changed: ChangedColliders<V>,
) {
    let s = &mut *sparti;
    s.errors.clear();
    for entity in removed.read() {
        s.remove(entity);
    }
    s.moves.clear();
    s.movers.clear();
    for (entity, collider, transform) in &changed {
        let shape = collider.placed(V::from_translation(transform.translation()));
        let Some(h) = s.handle(entity) else {
            s.insert(entity, &collider, shape);
            continue;
        };
        let Ok(o) = s.index.get(h) else {
            // Evicted by an index under `OutOfBounds::Remove` (it left the
            // world): filed again if its new place is inside.
            s.handles.remove(&entity);
            s.insert(entity, &collider, shape);
            continue;
        };
        if (o.layer, o.mask, o.is_static) != (collider.layer, collider.mask, collider.is_static) {
            // Layers and the static flag are set when filed.
            s.remove(entity);
            s.insert(entity, &collider, shape);
            continue;
        }
        if let Err(err) = shape.checked_aabb() {
            s.refuse(entity, "not moved (it keeps its last place)", err);
            continue;
        }
        s.moves.push((h, shape));
        s.movers.push(entity);
    }
    if s.index.update_many(&s.moves).is_err() {
        // A move the index refuses (outside a world that does not grow):
        // the batch changed nothing; each move on its own, so that the
        // others are applied.
        for i in 0..s.moves.len() {
            let (h, shape) = s.moves[i];
            if let Err(err) = s.index.update(h, shape) {
                let entity = s.movers[i];
                s.refuse(entity, "not moved (it keeps its last place)", err);
            }
        }
    }
    s.index.end_frame();
}

/// [`SpartiSystems::Contacts`]: one pair search, the contact messages,
/// and the index's build step, so that the queries search the grid the
/// pair search left (the index does not change until the next Sync).
fn find_contacts<V: Dim, S: Index<V>>(
    mut sparti: ResMut<Sparti<V, S>>,
    mut started: MessageWriter<ContactStarted<V>>,
    mut stopped: MessageWriter<ContactStopped>,
) {
    let s = &mut *sparti;
    s.index.contacts(&mut s.contacts);
    // The search left the index's grid up to date: the build step makes
    // the queries search it too (it sorts nothing again), from here until
    // the next Sync, so the next frame's `SpatialQuery` systems do not walk
    // the tree.
    s.index.flush();
    s.contacts.sort_unstable_by_key(Contact::pair);
    s.events.observe(s.contacts.iter().map(Contact::pair));
    for p in s.events.started() {
        let i = s
            .contacts
            .binary_search_by_key(p, Contact::pair)
            .expect("a started pair is one of this frame's contacts");
        if let Some(m) = s.record(&s.contacts[i]) {
            started.write(m);
        }
    }
    for &Pair { a, b } in s.events.stopped() {
        if let (Some(a), Some(b)) = (s.entity_or_gone(a), s.entity_or_gone(b)) {
            stopped.write(ContactStopped { a, b });
        }
    }
    s.gone.clear();
}

/// Questions to the index from any system, read-only (Bevy may run many
/// such systems at once). The answers are entities; they reflect the
/// index as of this frame's [`SpartiSystems::Sync`] (in a system that
/// runs before it, last frame's places).
///
/// # Example
/// ```
/// use bevy_ecs::prelude::*;
/// use bevy_math::Vec3;
/// use sparti_bevy::{Octree, SpatialQuery};
///
/// #[derive(Component)]
/// struct Grenade { radius: f32 }
///
/// fn blast(grenades: Query<(&Grenade, &bevy_transform::components::Transform)>, q: SpatialQuery<Vec3, Octree>) {
///     for (g, t) in &grenades {
///         for hit in q.within_radius(t.translation, g.radius) {
///             // damage `hit`
///             let _ = hit;
///         }
///     }
/// }
/// # bevy_ecs::system::assert_is_system(blast);
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, V: Dim, S: Index<V>> {
    sparti: Res<'w, Sparti<V, S>>,
}

impl<V: Dim, S: Index<V>> SpatialQuery<'_, V, S> {
    /// The plugin's state (the index, entity and handle look-ups).
    pub fn sparti(&self) -> &Sparti<V, S> {
        &self.sparti
    }

    /// The entities whose shapes come within `radius` of `point`. Like
    /// every query here, an iterator that allocates nothing once warm
    /// (see [`SpatialIndex::objects_in`]).
    pub fn within_radius<'a>(
        &'a self,
        point: V,
        radius: f32,
    ) -> impl ExactSizeIterator<Item = Entity> + use<'a, V, S> {
        self.within_radius_filtered(point, radius, Filter::ALL)
    }

    /// [`SpatialQuery::within_radius`] for the entities on the filter's
    /// layers.
    pub fn within_radius_filtered<'a>(
        &'a self,
        point: V,
        radius: f32,
        filter: Filter,
    ) -> impl ExactSizeIterator<Item = Entity> + use<'a, V, S> {
        let found = self.sparti.index.objects_within(point, radius, filter);
        found.map(|(_, o)| o.value)
    }

    /// The entities whose shapes meet the box.
    pub fn in_box<'a>(
        &'a self,
        aabb: &Aabb<V>,
        filter: Filter,
    ) -> impl ExactSizeIterator<Item = Entity> + use<'a, V, S> {
        self.sparti
            .index
            .objects_in(aabb, filter)
            .map(|(_, o)| o.value)
    }

    /// The entities whose centres lie in the view cone (a guard's sight).
    pub fn in_cone<'a>(
        &'a self,
        cone: &Cone<V>,
        filter: Filter,
    ) -> impl ExactSizeIterator<Item = Entity> + use<'a, V, S> {
        self.sparti
            .index
            .objects_in(cone, filter)
            .map(|(_, o)| o.value)
    }

    /// The first entity the ray hits within `max_dist`, with the hit.
    pub fn ray_nearest(
        &self,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
    ) -> Option<(Entity, RayHit<V>)> {
        let hit = self.sparti.index.ray_nearest(ray, max_dist, filter)?;
        Some((self.sparti.entity(hit.handle)?, hit))
    }

    /// The `k` entities nearest to `point`, nearest first, with their
    /// distances (0 inside a shape).
    pub fn nearest_k<'a>(
        &'a self,
        point: V,
        k: usize,
        filter: Filter,
    ) -> impl ExactSizeIterator<Item = (Entity, f32)> + use<'a, V, S> {
        let found = self.sparti.index.nearest(point, k, filter);
        found.map(|(n, o)| (o.value, n.distance))
    }

    /// This frame's contacts (found once by [`SpartiSystems::Contacts`]).
    pub fn contacts(&self) -> impl Iterator<Item = ContactStarted<V>> + '_ {
        self.sparti.contacts()
    }
}
