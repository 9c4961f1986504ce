package traffic

import (
	"math/rand/v2"
	"strings"
)

// vocabulary of the synthetic prompts.
var vocabulary = strings.Fields(`the a of to and in is for on with as by at from that this it be are was
model system request token engine batch queue cache latency throughput policy tenant priority
service level objective schedule gateway router stream embedding vector index retrieve generate
answer question context document summary benchmark load burst steady fair share deadline`)

// Words returns n deterministic pseudo-random words from seed.
func Words(seed uint64, n int) string {
	var src rand.PCG // one allocation (not two: rand.NewPCG's and its Rand's)
	src.Seed(seed, 0x776f726473)
	rng := rand.New(&src)
	var b strings.Builder
	b.Grow(8 * n)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}
