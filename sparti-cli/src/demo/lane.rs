//! One structure running a demo scene ("lane"), with its per-frame
//! figures: pair tests, objects per node, and the node churn that
//! shows lazy pruning.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use sparti::glam::{Vec2, Vec3};
use sparti::{Aabb, Contact, Handle, ObjectDesc, OutOfBounds, Shape, SpatialIndex, Vector};

use crate::catalogue::{Config, IndexJob};

/// The space of a structure, seen from the demos' 3D bodies: 2D structures
/// drop z.
pub trait Space: Vector {
    /// The point `p` in this space.
    fn from3(p: Vec3) -> Self;
    /// This point in 3D (z = 0 for 2D).
    fn to3(self) -> Vec3;
}

impl Space for Vec2 {
    fn from3(p: Vec3) -> Self {
        p.truncate()
    }
    fn to3(self) -> Vec3 {
        self.extend(0.0)
    }
}

impl Space for Vec3 {
    fn from3(p: Vec3) -> Self {
        p
    }
    fn to3(self) -> Vec3 {
        self
    }
}

/// The shape of a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Form {
    /// A disc (2D) or ball (3D) of this radius.
    Ball(f32),
    /// A box of these half extents (z ignored in 2D).
    Block(Vec3),
}

/// An object of a demo scene, in 3D coordinates (z = 0 for the discs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Stable id of the body; also the value stored in the structures.
    pub id: usize,
    /// Centre.
    pub centre: Vec3,
    /// Shape.
    pub form: Form,
    /// Static bodies are inserted once and never moved.
    pub is_static: bool,
}

impl Body {
    fn shape<V: Space>(&self) -> Shape<V> {
        let c = V::from3(self.centre);
        match self.form {
            Form::Ball(r) => Shape::sphere(c, r),
            Form::Block(h) => Shape::cuboid(c, V::from3(h)),
        }
    }
}

/// A contact between two bodies: their ids (in the order the structure
/// reports them) and the normal from the first to the second.
pub type Touch = (usize, usize, Vec3);

/// A node as drawn: its bounds in 3D (z = 0 in 2D), depth, objects held.
pub type NodeBox = (Vec3, Vec3, usize, usize);

/// What every lane offers, whatever its structure.
pub trait Lane {
    /// The structure's command-line name.
    fn name(&self) -> &'static str;
    /// Brings the structure to this frame's bodies (inserting new ids,
    /// moving the others, removing missing ids), then `end_frame()` and a
    /// contact search.
    ///
    /// # Errors
    /// The structure refused a body or broke an invariant.
    fn frame(&mut self, bodies: &[Body]) -> Result<(), String>;
    /// This frame's pairs as sorted `(min id, max id)`, sorted.
    fn pairs(&self) -> &[(usize, usize)];
    /// This frame's contacts.
    fn touches(&self) -> Vec<Touch>;
    /// The nodes, parents before children.
    fn nodes(&self) -> Vec<NodeBox>;
    /// The figures gathered so far.
    fn figures(&self) -> &Figures;
}

/// Figures of one lane, summed over frames.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// Frames run.
    pub frames: u64,
    /// Pair tests of each frame.
    pub tests: Vec<u64>,
    /// `N(N-1)/2` of each frame, N the objects in the structure.
    pub half_reference: Vec<u64>,
    /// Share of nodes holding at most 5 objects, each frame.
    pub small_nodes: Vec<f64>,
    /// `histogram[k]`: nodes holding exactly k objects, summed over frames.
    pub histogram: Vec<u64>,
    /// Nodes, summed over frames.
    pub nodes: u64,
    /// Nodes of the last frame.
    pub last_nodes: usize,
    /// Deepest node of the last frame.
    pub last_depth: usize,
    /// Bytes the structure held at the last frame.
    pub last_memory: usize,
    /// Most nodes in a frame.
    pub max_nodes: usize,
    /// Empty branches kept alive (nodes other than the root whose whole
    /// subtree holds no object), summed over frames.
    pub idle: u64,
    /// Nodes that appeared since the previous frame, summed.
    pub created: u64,
    /// Nodes that disappeared since the previous frame, summed.
    pub pruned: u64,
    /// Same as `created` for a tree that would prune every empty branch at
    /// once: the nodes holding objects in their subtree (and the root) that
    /// were not needed the frame before.
    pub eager_created: u64,
    /// Same as `pruned` for that eagerly pruned tree.
    pub eager_pruned: u64,
    /// Nodes of that eagerly pruned tree, summed over frames.
    pub eager_nodes: u64,
    /// Time in updates, `end_frame()` and contacts.
    pub time: Duration,
}

/// A node's identity across frames: depth and the bits of its lower corner.
type NodeKey = (usize, [u32; 3]);

/// A lane of the demos: the catalogue's structure with these settings,
/// over a world it must not leave (what leaves it is refused, a bug of the
/// demo's motion), named as on the command line.
///
/// # Errors
/// The library refused the settings (a bug).
pub fn lane<V: Space>(config: Config, world: Aabb<V>) -> Result<Box<dyn Lane>, String> {
    let name = config.structure().name(V::DIM);
    config
        .build_bounded(world, OutOfBounds::Reject, ToLane(name))
        .map_err(|e| e.to_string())
}

/// Hands a structure the catalogue built to a new lane.
struct ToLane(&'static str);

impl<V: Space> IndexJob<V, usize> for ToLane {
    type Output = Box<dyn Lane>;
    fn run<S: SpatialIndex<V, usize> + 'static>(self, index: S) -> Box<dyn Lane> {
        Box::new(Runner::new(self.0, index))
    }
}

/// A structure running a scene.
pub struct Runner<V: Space, S: SpatialIndex<V, usize>> {
    name: &'static str,
    index: S,
    handles: HashMap<usize, Handle>,
    contacts: Vec<Contact<V>>,
    pairs: Vec<(usize, usize)>,
    figures: Figures,
    live_nodes: HashSet<NodeKey>,
    needed_nodes: HashSet<NodeKey>,
}

impl<V: Space, S: SpatialIndex<V, usize>> Runner<V, S> {
    /// A lane running this (empty) structure.
    pub fn new(name: &'static str, index: S) -> Self {
        Self {
            name,
            index,
            handles: HashMap::new(),
            contacts: Vec::new(),
            pairs: Vec::new(),
            figures: Figures::default(),
            live_nodes: HashSet::new(),
            needed_nodes: HashSet::new(),
        }
    }

    fn node_figures(&mut self) {
        let mut list: Vec<(NodeKey, usize)> = Vec::new();
        self.index.for_each_node(|b, depth, count| {
            let min = b.min.to3();
            list.push((
                (depth, [min.x.to_bits(), min.y.to_bits(), min.z.to_bits()]),
                count,
            ));
        });
        if list.is_empty() {
            return;
        }
        // Subtree sums: the nodes come depth first, parents before
        // children, so a subtree is a contiguous run.
        let mut sub: Vec<usize> = list.iter().map(|&(_, c)| c).collect();
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..list.len() {
            while let Some(&top) = stack.last() {
                if list[top].0.0 < list[i].0.0 {
                    break;
                }
                stack.pop();
                if let Some(&p) = stack.last() {
                    sub[p] += sub[top];
                }
            }
            stack.push(i);
        }
        while let Some(top) = stack.pop() {
            if let Some(&p) = stack.last() {
                sub[p] += sub[top];
            }
        }
        let live: HashSet<NodeKey> = list.iter().map(|&(k, _)| k).collect();
        let needed: HashSet<NodeKey> = list
            .iter()
            .zip(&sub)
            .enumerate()
            .filter(|&(i, (_, &s))| i == 0 || s > 0)
            .map(|(_, ((k, _), _))| *k)
            .collect();
        let f = &mut self.figures;
        f.idle += live.len().saturating_sub(needed.len()) as u64;
        f.eager_nodes += needed.len() as u64;
        if f.frames > 1 {
            f.created += live.difference(&self.live_nodes).count() as u64;
            f.pruned += self.live_nodes.difference(&live).count() as u64;
            f.eager_created += needed.difference(&self.needed_nodes).count() as u64;
            f.eager_pruned += self.needed_nodes.difference(&needed).count() as u64;
        }
        self.live_nodes = live;
        self.needed_nodes = needed;
    }
}

impl<V: Space, S: SpatialIndex<V, usize>> Lane for Runner<V, S> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn frame(&mut self, bodies: &[Body]) -> Result<(), String> {
        let name = self.name;
        let start = Instant::now();
        self.index.reset_counters();
        let mut present = HashSet::with_capacity(bodies.len());
        for b in bodies {
            present.insert(b.id);
            match self.handles.get(&b.id) {
                Some(_) if b.is_static => {}
                Some(&h) => self
                    .index
                    .update(h, b.shape())
                    .map_err(|e| format!("{name}: update {}: {e}", b.id))?,
                None => {
                    let desc = ObjectDesc::new(b.shape::<V>(), b.id).with_static(b.is_static);
                    let h = self
                        .index
                        .insert(desc)
                        .map_err(|e| format!("{name}: insert {}: {e}", b.id))?;
                    self.handles.insert(b.id, h);
                }
            }
        }
        let gone: Vec<usize> = self
            .handles
            .keys()
            .copied()
            .filter(|id| !present.contains(id))
            .collect();
        for id in gone {
            let h = self.handles.remove(&id).expect("listed");
            self.index
                .remove(h)
                .map_err(|e| format!("{name}: remove {id}: {e}"))?;
        }
        self.index.end_frame();
        self.index.contacts(&mut self.contacts);
        let elapsed = start.elapsed();

        let n = self.index.len() as u64;
        let stats = self.index.stats();
        let f = &mut self.figures;
        f.time += elapsed;
        f.frames += 1;
        f.tests.push(self.index.counters().pair_tests);
        f.half_reference.push(n * n.saturating_sub(1) / 2);
        f.small_nodes.push(stats.share_of_nodes_with_at_most(5));
        if f.histogram.len() < stats.objects_per_node.len() {
            f.histogram.resize(stats.objects_per_node.len(), 0);
        }
        for (k, &c) in stats.objects_per_node.iter().enumerate() {
            f.histogram[k] += c as u64;
        }
        f.nodes += stats.nodes as u64;
        f.last_nodes = stats.nodes;
        f.last_depth = stats.max_depth;
        f.last_memory = stats.memory_bytes;
        f.max_nodes = f.max_nodes.max(stats.nodes);
        self.node_figures();
        self.index.validate().map_err(|e| format!("{name}: {e}"))?;

        self.pairs.clear();
        for c in &self.contacts {
            let a = self.index.get(c.a).map_err(|e| e.to_string())?.value;
            let b = self.index.get(c.b).map_err(|e| e.to_string())?.value;
            self.pairs.push((a.min(b), a.max(b)));
        }
        self.pairs.sort_unstable();
        Ok(())
    }

    fn pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    fn touches(&self) -> Vec<Touch> {
        self.contacts
            .iter()
            .map(|c| {
                let a = self.index.get(c.a).expect("live").value;
                let b = self.index.get(c.b).expect("live").value;
                (a, b, c.normal.to3())
            })
            .collect()
    }

    fn nodes(&self) -> Vec<NodeBox> {
        let mut out = Vec::new();
        self.index.for_each_node(|b, depth, count| {
            out.push((b.min.to3(), b.max.to3(), depth, count));
        });
        out
    }

    fn figures(&self) -> &Figures {
        &self.figures
    }
}

/// What differs between two sorted pair lists, for the error message.
pub fn diff(a: &[(usize, usize)], b: &[(usize, usize)]) -> String {
    let only_a: Vec<_> = a.iter().filter(|p| b.binary_search(p).is_err()).collect();
    let only_b: Vec<_> = b.iter().filter(|p| a.binary_search(p).is_err()).collect();
    format!("only in it: {only_a:?}; only in the brute force: {only_b:?}")
}

/// Checks that every lane found the brute force's pairs (the brute force
/// is the lane named `brute`).
///
/// # Errors
/// The first lane whose pairs differ, with the difference.
pub fn check_pairs(lanes: &[Box<dyn Lane>], frame: usize) -> Result<(), String> {
    let brute = lanes
        .iter()
        .find(|l| l.name() == "brute")
        .ok_or("no brute force lane")?;
    for l in lanes {
        if l.pairs() != brute.pairs() {
            return Err(format!(
                "frame {frame}: the {} pairs differ from the brute force's: {}",
                l.name(),
                diff(l.pairs(), brute.pairs())
            ));
        }
    }
    Ok(())
}
