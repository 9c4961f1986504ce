package index

import (
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/coder/hnsw"
)

// benchSize keeps benchmark builds short on a shared machine; the recall
// test covers the 10k default.
const benchSize = 5000

func BenchmarkBuild(b *testing.B) {
	cfg := Config{Size: benchSize, Seed: 1}.WithDefaults()
	for b.Loop() {
		if _, err := Build(cfg, embedder(cfg.Dim)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/benchSize, "us/doc")
}

func benchQueries(b *testing.B, ix *Index, n int) [][]float32 {
	var qs [][]float32
	for _, q := range ix.Queries(n, 4, 7) {
		qs = append(qs, corpus.Vector(q.Text, ix.Config().Dim))
	}
	return qs
}

func BenchmarkSearch(b *testing.B) {
	ix, err := Build(Config{Size: benchSize, Seed: 1}, embedder(384))
	if err != nil {
		b.Fatal(err)
	}
	qs := benchQueries(b, ix, 256)
	recall := ix.Recall(qs[:100], 10)
	b.Run("hnsw", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := ix.Search(qs[i%len(qs)], 10); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(recall, "recall@10")
	})
	b.Run("exact", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := ix.Exact(qs[i%len(qs)], 10); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkCoderHNSW measures github.com/coder/hnsw v0.6.1 on the same
// corpus and reports its recall@10: the reason package index carries its
// own HNSW (see the package doc).
func BenchmarkCoderHNSW(b *testing.B) {
	ix, err := Build(Config{Size: benchSize, Seed: 1}, embedder(384))
	if err != nil {
		b.Fatal(err)
	}
	g := hnsw.NewGraph[int]()
	g.M, g.EfSearch = ix.cfg.M, ix.cfg.EfSearch
	for id, v := range ix.Vecs() {
		g.Add(hnsw.MakeNode(id, v))
	}
	qs := benchQueries(b, ix, 100)
	var recall float64
	for _, q := range qs {
		exact, _ := ix.Exact(q, 10)
		got := map[int]bool{}
		for _, n := range g.Search(q, max(10, g.EfSearch)) {
			got[n.Key] = true
		}
		for _, h := range exact {
			if got[h.ID] {
				recall += 0.1
			}
		}
	}
	i := 0
	for b.Loop() {
		g.Search(qs[i%len(qs)], 10)
		i++
	}
	b.ReportMetric(recall/float64(len(qs)), "recall@10")
}
