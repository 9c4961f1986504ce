package workload

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// File is a parsed config file: the shared keys already decoded, the qN
// sections kept as YAML nodes until the workloads they configure exist.
type File struct {
	Path     string
	src      []byte
	sections map[string]ast.Node
}

// section captures the node of a qN key.
type section struct{ node ast.Node }

func (s *section) UnmarshalYAML(n ast.Node) error { s.node = n; return nil }

// fileDoc is the top level of a config file.
type fileDoc struct {
	Shared `yaml:",inline"`
	Q1     section `yaml:"q1"`
	Q2     section `yaml:"q2"`
	Q3     section `yaml:"q3"`
	Q4     section `yaml:"q4"`
	Q5     section `yaml:"q5"`
	Q6     section `yaml:"q6"`
	Q7     section `yaml:"q7"`
	Q8     section `yaml:"q8"`
}

// LoadFile reads path (relative to the working directory), substitutes
// ${VAR} and ${VAR:-default} from lookup, and decodes its top-level keys
// strictly over shared. Unknown keys are errors naming their path.
func LoadFile(path string, shared *Shared, lookup LookupEnv) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return ParseConfig(path, raw, shared, lookup)
}

// ParseConfig is LoadFile on the bytes of a file named name.
func ParseConfig(name string, raw []byte, shared *Shared, lookup LookupEnv) (*File, error) {
	src, err := Expand(string(raw), lookup)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	f := &File{Path: name, src: []byte(src), sections: map[string]ast.Node{}}
	doc := fileDoc{Shared: *shared}
	if err := yaml.UnmarshalWithOptions(f.src, &doc, yaml.Strict()); err != nil {
		return nil, f.wrap(err)
	}
	*shared = doc.Shared
	for key, s := range map[string]section{"q1": doc.Q1, "q2": doc.Q2, "q3": doc.Q3, "q4": doc.Q4,
		"q5": doc.Q5, "q6": doc.Q6, "q7": doc.Q7, "q8": doc.Q8} {
		if s.node != nil {
			f.sections[key] = s.node
		}
	}
	return f, nil
}

// Decode decodes the section of spec (if the file has one) strictly into
// cfg. A file without the section leaves cfg as it is.
func (f *File) Decode(spec Spec, cfg Config) error {
	if f == nil {
		return nil
	}
	n, ok := f.sections[spec.Section()]
	if !ok || n.Type() == ast.NullType {
		return nil
	}
	if err := yaml.NodeToValue(n, cfg, yaml.Strict()); err != nil {
		return f.wrap(err)
	}
	return nil
}

// wrap turns a YAML error into one line: file:line:col: key.path: message.
func (f *File) wrap(err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return fmt.Errorf("config %s: %s", f.Path, firstLine(err.Error()))
	}
	tk := ye.GetToken()
	where := fmt.Sprintf("%s:%d:%d", f.Path, tk.Position.Line, tk.Position.Column)
	if p := keyPath(f.src, tk); p != "" {
		where += ": " + p
	}
	return fmt.Errorf("config %s: %s", where, firstLine(ye.GetMessage()))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// keyPath finds the mapping entry whose key or value is at tk's position
// and returns its dotted path, e.g. q2.slo.llm_ttft.
func keyPath(src []byte, tk *token.Token) string {
	file, err := parser.ParseBytes(src, 0)
	if err != nil {
		return ""
	}
	v := &pathFinder{pos: tk.Position}
	for _, d := range file.Docs {
		if d.Body != nil {
			ast.Walk(v, d.Body)
		}
	}
	return strings.TrimPrefix(strings.TrimPrefix(v.path, "$"), ".")
}

type pathFinder struct {
	pos  *token.Position
	path string
}

func (p *pathFinder) Visit(n ast.Node) ast.Visitor {
	if p.path != "" || n == nil {
		return nil
	}
	mv, ok := n.(*ast.MappingValueNode)
	if !ok {
		return p
	}
	for _, c := range []ast.Node{mv.Key, mv.Value} {
		if c != nil && samePos(c.GetToken(), p.pos) {
			p.path = mv.GetPath()
			if k, ok := mv.Key.(ast.Node); ok && !strings.HasSuffix(p.path, k.String()) {
				p.path += "." + k.String()
			}
			return nil
		}
	}
	return p
}

func samePos(tk *token.Token, pos *token.Position) bool {
	return tk != nil && tk.Position != nil && pos != nil &&
		tk.Position.Line == pos.Line && tk.Position.Column == pos.Column
}
