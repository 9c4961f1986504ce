package strictyaml

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// MaxAliasNodes bounds the nodes that aliases (and merge keys, which
// are aliases) add to a document when the decoder expands them: our
// configs share a few blocks this way, while a "billion laughs" document
// of a few hundred bytes grows ~10× per level (goccy/go-yaml took 11 s
// for 7 levels of merge keys, minutes for 8). The count is made on the
// parsed tree, each anchor's size once, before anything is decoded.
const MaxAliasNodes = 100_000

// ErrAliasBomb is the error of a document whose aliases expand past
// MaxAliasNodes.
var ErrAliasBomb = errors.New("YAML aliases expand too much")

// CheckAliases reports a document whose aliases would make the decoder
// build more than MaxAliasNodes nodes beyond its own. It takes time
// linear in the parsed tree.
func CheckAliases(f *ast.File) error {
	c := &aliasCount{anchors: map[string]int64{}}
	for _, d := range f.Docs {
		c.size(d)
		if c.added > MaxAliasNodes {
			return fmt.Errorf("%w: more than %d nodes through aliases, by line %d; write the values out or share less", ErrAliasBomb, MaxAliasNodes, c.line)
		}
	}
	return nil
}

// aliasCount sizes a tree with every alias expanded, saturating at
// MaxAliasNodes+1 so that no count overflows.
type aliasCount struct {
	anchors map[string]int64 // expanded size of each anchor's value
	added   int64            // nodes added by aliases so far
	line    int              // the alias that passed the bound
}

const saturated = MaxAliasNodes + 1

func (c *aliasCount) size(n ast.Node) int64 {
	switch x := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		return c.size(x.Body)
	case *ast.AnchorNode:
		s := c.size(x.Value)
		c.anchors[nodeName(x.Name)] = s
		return s
	case *ast.AliasNode:
		s := c.anchors[nodeName(x.Value)]
		c.added = min(c.added+s, saturated)
		if c.added > MaxAliasNodes && c.line == 0 && x.Start != nil && x.Start.Position != nil {
			c.line = x.Start.Position.Line
		}
		return s
	case *ast.TagNode:
		return c.size(x.Value)
	case *ast.MappingKeyNode:
		return c.size(x.Value)
	case *ast.MappingValueNode:
		return sum(1, c.size(x.Key), c.size(x.Value))
	case *ast.MappingNode:
		s := int64(1)
		for _, v := range x.Values {
			s = sum(s, c.size(v))
		}
		return s
	case *ast.SequenceNode:
		s := int64(1)
		for _, v := range x.Values {
			s = sum(s, c.size(v))
		}
		return s
	}
	return 1
}

func sum(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		s = min(s+x, saturated)
	}
	return s
}

// nodeName is the name of an anchor or alias.
func nodeName(n ast.Node) string {
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	if n == nil {
		return ""
	}
	return n.String()
}
