//! The brute force: every object against every other. The oracle of
//! the tests and the baseline of the benchmarks.

use crate::geometry::{Ray, Region, Shape, Vector};
use crate::index::{Item, Neighbor, checked_aabb, closer, report_pair, sort_hits, sort_neighbors};
use crate::store::Store;
use crate::{
    Counters, Error, Filter, Handle, LayerMatrix, Object, ObjectDesc, RayHit, SpatialIndex,
    TreeStats, ValidationError,
};

/// All objects in one flat list; every pair search does `N(N-1)/2` box tests.
///
/// Use it as the reference answer for any other structure, or for a few
/// dozen objects, where it is as fast as anything.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{BruteForce, ObjectDesc, Shape, SpatialIndex};
/// let mut brute = BruteForce::<Vec2, u32>::new();
/// for i in 0..10 {
///     brute.insert(ObjectDesc::new(Shape::sphere(Vec2::new(i as f32, 0.0), 0.6), i)).unwrap();
/// }
/// let mut pairs = Vec::new();
/// brute.pairs(&mut pairs);
/// assert_eq!(pairs.len(), 9); // neighbours touch
/// assert_eq!(brute.counters().pair_tests, 45); // 10 * 9 / 2
/// ```
pub struct BruteForce<V: Vector, T> {
    store: Store<Object<V, T>>,
    items: Vec<Item<V>>,
    matrix: LayerMatrix,
    counters: crate::kernel::AtomicCounters,
}

impl<V: Vector, T> Default for BruteForce<V, T> {
    fn default() -> Self {
        Self {
            store: Store::default(),
            items: Vec::new(),
            matrix: LayerMatrix::ALL,
            counters: crate::kernel::AtomicCounters::default(),
        }
    }
}

impl<V: Vector, T> BruteForce<V, T> {
    /// An empty brute force.
    pub fn new() -> Self {
        Self::default()
    }

    fn push_item(&mut self, slot: u32) {
        let o = self.store.obj(slot);
        let item = Item::new(o.aabb(), slot, o.is_static);
        let s = self.store.place_mut(slot);
        s.node = 0;
        s.pos = self.items.len() as u32;
        self.items.push(item);
    }
}

impl<V: Vector, T> SpatialIndex<V, T> for BruteForce<V, T> {
    fn insert(&mut self, desc: ObjectDesc<V, T>) -> Result<Handle, Error> {
        let obj = Object::from_desc(desc)?;
        let h = self.store.insert(obj)?;
        self.push_item(h.index);
        Ok(h)
    }

    fn insert_many(&mut self, descs: Vec<ObjectDesc<V, T>>) -> Result<Vec<Handle>, Error> {
        for d in &descs {
            checked_aabb(&d.shape)?;
        }
        // Room for the whole batch first: on error nothing is inserted.
        self.store.room_for(descs.len())?;
        let mut out = Vec::with_capacity(descs.len());
        for d in descs {
            out.push(self.insert(d)?);
        }
        Ok(out)
    }

    fn update(&mut self, h: Handle, shape: Shape<V>) -> Result<(), Error> {
        let slot = self.store.resolve(h)?;
        let aabb = checked_aabb(&shape)?;
        let o = self.store.obj_mut(slot);
        o.shape = shape;
        let pos = self.store.place(slot).pos as usize;
        self.items[pos].aabb = aabb;
        Ok(())
    }

    fn remove(&mut self, h: Handle) -> Result<T, Error> {
        let slot = self.store.resolve(h)?;
        let pos = self.store.place(slot).pos as usize;
        self.items.swap_remove(pos);
        if let Some(moved) = self.items.get(pos) {
            self.store.place_mut(moved.slot()).pos = pos as u32;
        }
        Ok(self.store.remove(slot).value)
    }

    fn get(&self, h: Handle) -> Result<&Object<V, T>, Error> {
        self.store.get(h)
    }

    fn value_mut(&mut self, h: Handle) -> Result<&mut T, Error> {
        self.store.value_mut(h)
    }

    fn len(&self) -> usize {
        self.store.len()
    }

    fn objects<'a>(&'a self) -> impl Iterator<Item = (Handle, &'a Object<V, T>)>
    where
        T: 'a,
    {
        self.store.objects()
    }

    fn clear(&mut self) {
        self.store.clear();
        self.items.clear();
    }

    fn flush(&mut self) {}

    fn end_frame(&mut self) {}

    fn query<R: Region<V>>(&self, region: &R, filter: Filter, out: &mut Vec<Handle>) {
        let mut c = Counters::default();
        out.clear();
        c.queries += 1;
        c.node_visits += 1;
        for it in &self.items {
            let o = self.store.obj(it.slot());
            if filter.accepts(o.layer) && region.matches(&o.shape) {
                out.push(self.store.handle(it.slot()));
            }
        }
        c.shape_tests += self.items.len() as u64;
        self.counters.add(&c);
    }

    fn ray_nearest(&self, ray: &Ray<V>, max_dist: f32, filter: Filter) -> Option<RayHit<V>> {
        let mut c = Counters::default();
        c.queries += 1;
        c.node_visits += 1;
        self.counters.add(&c);
        if max_dist.is_nan() || max_dist < 0.0 {
            return None;
        }
        let mut best: Option<RayHit<V>> = None;
        for it in &self.items {
            let o = self.store.obj(it.slot());
            if !filter.accepts(o.layer) {
                continue;
            }
            if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                let hit = RayHit {
                    handle: self.store.handle(it.slot()),
                    distance: x.distance,
                    point: x.point,
                    normal: x.normal,
                };
                if closer(&hit, &best) {
                    best = Some(hit);
                }
            }
        }
        best
    }

    fn ray_all(&self, ray: &Ray<V>, max_dist: f32, filter: Filter, out: &mut Vec<RayHit<V>>) {
        let mut c = Counters::default();
        out.clear();
        c.queries += 1;
        c.node_visits += 1;
        self.counters.add(&c);
        if max_dist.is_nan() || max_dist < 0.0 {
            return;
        }
        for it in &self.items {
            let o = self.store.obj(it.slot());
            if !filter.accepts(o.layer) {
                continue;
            }
            if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                out.push(RayHit {
                    handle: self.store.handle(it.slot()),
                    distance: x.distance,
                    point: x.point,
                    normal: x.normal,
                });
            }
        }
        sort_hits(out);
    }

    fn nearest_k(&self, point: V, k: usize, filter: Filter, out: &mut Vec<Neighbor>) {
        let mut c = Counters::default();
        out.clear();
        c.queries += 1;
        c.node_visits += 1;
        self.counters.add(&c);
        c = Counters::default();
        if k == 0 || !point.is_finite() {
            return;
        }
        for it in &self.items {
            let o = self.store.obj(it.slot());
            if filter.accepts(o.layer) {
                out.push(Neighbor {
                    handle: self.store.handle(it.slot()),
                    distance: o.shape.distance_to_point(point),
                });
            }
        }
        c.shape_tests += out.len() as u64;
        self.counters.add(&c);
        sort_neighbors(out, k);
    }

    fn set_layer_matrix(&mut self, matrix: LayerMatrix) {
        self.matrix = matrix;
    }

    fn layer_matrix(&self) -> &LayerMatrix {
        &self.matrix
    }

    fn for_each_pair<F>(&self, mut f: F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let mut c = Counters::default();
        let n = self.items.len();
        c.node_visits += 1;
        c.pair_tests += (n as u64) * (n as u64).saturating_sub(1) / 2;
        for i in 0..n {
            let a = self.items[i];
            for b in &self.items[i + 1..] {
                if !a.aabb.intersects(&b.aabb) || (a.is_static() && b.is_static()) {
                    continue;
                }
                c.shape_tests += 1;
                report_pair(&self.store, &self.matrix, a.slot(), b.slot(), &mut f);
            }
        }
        self.counters.add(&c);
    }

    fn counters(&self) -> Counters {
        self.counters.load()
    }

    fn reset_counters(&mut self) {
        self.counters.reset();
    }

    fn stats(&self) -> TreeStats {
        let n = self.items.len();
        let mut objects_per_node = vec![0; n + 1];
        objects_per_node[n] = 1;
        TreeStats {
            objects: n,
            pending: 0,
            nodes: 1,
            leaves: 1,
            max_depth: 0,
            objects_per_node,
            memory_bytes: self.store.memory_bytes()
                + self.items.capacity() * core::mem::size_of::<Item<V>>(),
        }
    }

    fn for_each_node<F: FnMut(&crate::Aabb<V>, usize, usize)>(&self, _f: F) {}

    fn validate(&self) -> Result<(), ValidationError> {
        if self.items.len() != self.store.len() {
            return Err(ValidationError(format!(
                "{} items for {} objects",
                self.items.len(),
                self.store.len()
            )));
        }
        for (pos, it) in self.items.iter().enumerate() {
            let s = self.store.place(it.slot());
            let Some(o) = self.store.get_obj(it.slot()) else {
                return Err(ValidationError(format!("item {pos} names a free slot")));
            };
            if s.pos as usize != pos || o.aabb() != it.aabb {
                return Err(ValidationError(format!("item {pos} out of date")));
            }
        }
        Ok(())
    }
}
