package sim

import "container/list"

// blockHashes returns the chained hash of every full block of blockTokens
// simulated tokens of prompt: hash i covers tokens [0, (i+1)·blockTokens),
// so equal hashes mean equal prefixes, as in vLLM's automatic prefix cache.
func blockHashes(prompt string, blockTokens int) []uint64 {
	var out []uint64
	h, n := uint64(fnvOffset), 0
	forEachToken(prompt, func(tok string) {
		h = fnvString(h, tok)
		h = (h ^ 0xff) * fnvPrime // token separator
		n++
		if n%blockTokens == 0 {
			out = append(out, h)
		}
	})
	return out
}

// blockHashesIDs is blockHashes over token IDs.
func blockHashesIDs(ids []int, blockTokens int) []uint64 {
	out := make([]uint64, 0, len(ids)/blockTokens)
	h := uint64(fnvOffset)
	for i, id := range ids {
		h ^= uint64(id)
		h *= fnvPrime
		if (i+1)%blockTokens == 0 {
			out = append(out, h)
		}
	}
	return out
}

// prefixCache is an LRU set of prompt-block hashes bounded to the engine's
// KV pages. Cached blocks are counted as a speed-up only: admission still
// reserves a request's full KV (a conservative simplification of vLLM,
// where shared blocks are not duplicated).
type prefixCache struct {
	capacity int
	lru      *list.List // front = most recent; values are uint64 hashes
	index    map[uint64]*list.Element
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: max(capacity, 1), lru: list.New(), index: map[uint64]*list.Element{}}
}

// match returns how many leading blocks are cached, marking them used.
func (c *prefixCache) match(blocks []uint64) int {
	for i, h := range blocks {
		el, ok := c.index[h]
		if !ok {
			return i
		}
		c.lru.MoveToFront(el)
	}
	return len(blocks)
}

// insert caches blocks, evicting the least recently used beyond capacity.
func (c *prefixCache) insert(blocks []uint64) {
	for _, h := range blocks {
		if el, ok := c.index[h]; ok {
			c.lru.MoveToFront(el)
			continue
		}
		c.index[h] = c.lru.PushFront(h)
		if c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.index, old.Value.(uint64))
		}
	}
}

// len is the number of cached blocks.
func (c *prefixCache) len() int { return c.lru.Len() }
