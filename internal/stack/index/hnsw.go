package index

import (
	"cmp"
	"container/heap"
	"math/rand/v2"
	"slices"
)

// graph is a Hierarchical Navigable Small World graph (Malkov & Yashunin,
// arXiv:1603.09320, algorithms 1, 2 and 4) over unit vectors with cosine
// distance, keyed by document id. It keeps coder/hnsw's parameters (M, Ml,
// EfSearch) but implements the paper's search (stop when the nearest
// candidate is farther than the worst of ef results) and its neighbour
// selection heuristic, which keeps links between clusters. See package
// doc for why this is not github.com/coder/hnsw v0.6.1 itself.
//
// It is built by one goroutine; afterwards searches may run concurrently.
type graph struct {
	m, m0   int     // max links per node on upper layers / on layer 0 (2M)
	efBuild int     // candidate list size while inserting
	ml      float64 // probability that a node also lives one layer up
	rng     *rand.Rand
	vecs    [][]float32
	links   [][][]int32 // links[node][layer]
	entry   int32
	top     int // layer of the entry point
}

func newGraph(m, efBuild int, ml float64, seed int64, vecs [][]float32) *graph {
	return &graph{
		m: m, m0: 2 * m, efBuild: efBuild, ml: ml,
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x4e5)),
		vecs:  vecs,
		links: make([][][]int32, len(vecs)),
		entry: -1,
	}
}

// cand is a node with its distance to the query.
type cand struct {
	id   int32
	dist float32
}

type minHeap []cand

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return byDist(h[i], h[j]) < 0 }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type maxHeap struct{ minHeap }

func (h maxHeap) Less(i, j int) bool { return byDist(h.minHeap[i], h.minHeap[j]) > 0 }

func (g *graph) dist(a int32, q []float32) float32 { return 1 - dot(g.vecs[a], q) }

func (g *graph) randomLevel() int {
	l := 0
	for l < 16 && g.rng.Float64() < g.ml {
		l++
	}
	return l
}

// insert adds node id (its vector must be in g.vecs).
func (g *graph) insert(id int32) {
	q := g.vecs[id]
	level := g.randomLevel()
	g.links[id] = make([][]int32, level+1)
	if g.entry < 0 {
		g.entry, g.top = id, level
		return
	}
	ep := cand{g.entry, g.dist(g.entry, q)}
	for l := g.top; l > level; l-- {
		ep = g.greedy(q, ep, l)
	}
	eps := []cand{ep}
	for l := min(level, g.top); l >= 0; l-- {
		w := g.searchLayer(q, eps, g.efBuild, l)
		maxLinks := g.maxLinks(l)
		g.links[id][l] = g.selectNeighbours(w, g.m)
		for _, n := range g.links[id][l] {
			g.link(n, id, l, maxLinks)
		}
		eps = w
	}
	if level > g.top {
		g.entry, g.top = id, level
	}
}

func (g *graph) maxLinks(layer int) int {
	if layer == 0 {
		return g.m0
	}
	return g.m
}

// link adds a link from n to id on layer l, re-selecting n's links with the
// heuristic when it has too many.
func (g *graph) link(n, id int32, l, maxLinks int) {
	ls := append(g.links[n][l], id)
	if len(ls) > maxLinks {
		cs := make([]cand, len(ls))
		for i, x := range ls {
			cs[i] = cand{x, 1 - dot(g.vecs[x], g.vecs[n])}
		}
		slices.SortFunc(cs, byDist)
		ls = g.selectNeighbours(cs, maxLinks)
	}
	g.links[n][l] = ls
}

func byDist(a, b cand) int {
	switch {
	case a.dist < b.dist:
		return -1
	case a.dist > b.dist:
		return 1
	}
	return cmp.Compare(a.id, b.id)
}

// selectNeighbours is the paper's heuristic (algorithm 4): walking the
// candidates nearest first, keep one only if it is closer to the query than
// to every neighbour kept so far. cs must be sorted by distance.
func (g *graph) selectNeighbours(cs []cand, m int) []int32 {
	out := make([]int32, 0, m)
	for _, c := range cs {
		if len(out) == m {
			break
		}
		keep := true
		for _, r := range out {
			if 1-dot(g.vecs[c.id], g.vecs[r]) < c.dist {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c.id)
		}
	}
	return out
}

// greedy walks layer l from ep to the local minimum of distance to q.
func (g *graph) greedy(q []float32, ep cand, l int) cand {
	for changed := true; changed; {
		changed = false
		for _, n := range g.links[ep.id][l] {
			if d := g.dist(n, q); d < ep.dist {
				ep, changed = cand{n, d}, true
			}
		}
	}
	return ep
}

// searchLayer is the paper's algorithm 2: best-first search from eps
// keeping the ef nearest found; it returns them sorted nearest first.
func (g *graph) searchLayer(q []float32, eps []cand, ef, l int) []cand {
	visited := make([]uint64, (len(g.vecs)+63)/64)
	cands := &minHeap{}
	res := &maxHeap{}
	for _, e := range eps {
		visited[e.id/64] |= 1 << (e.id % 64)
		heap.Push(cands, e)
		heap.Push(res, e)
		if res.Len() > ef {
			heap.Pop(res)
		}
	}
	for cands.Len() > 0 {
		c := heap.Pop(cands).(cand)
		if c.dist > res.minHeap[0].dist && res.Len() >= ef {
			break
		}
		for _, n := range g.links[c.id][l] {
			if visited[n/64]&(1<<(n%64)) != 0 {
				continue
			}
			visited[n/64] |= 1 << (n % 64)
			d := g.dist(n, q)
			if res.Len() < ef || d < res.minHeap[0].dist {
				heap.Push(cands, cand{n, d})
				heap.Push(res, cand{n, d})
				if res.Len() > ef {
					heap.Pop(res)
				}
			}
		}
	}
	out := slices.Clone(res.minHeap)
	slices.SortFunc(out, byDist)
	return out
}

// search returns up to ef nearest nodes to the unit vector q, nearest first.
func (g *graph) search(q []float32, ef int) []cand {
	if g.entry < 0 {
		return nil
	}
	ep := cand{g.entry, g.dist(g.entry, q)}
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	return g.searchLayer(q, []cand{ep}, ef, 0)
}
