package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// documented is one `sagebench …` command of a shell block in the docs.
type documented struct {
	where string // file:line
	args  []string
	exit  int // "# exits N" on the line, else 0
}

var exitsNote = regexp.MustCompile(`#\s*exits (\d)`)

// notRunHere are the subcommands the docs test does not execute: servers,
// long measurements, and commands that need git history or a scrape
// target. Their flags are covered by their own tests.
var notRunHere = []string{"serve", "gobench", "micro", "baseline", "capture", "worker", "report", "aggregate", "calibrate"}

// documentedCommands collects the commands of ```sh blocks in files. A
// block fenced ```sh template shows commands for another repository's
// files (a migration recipe) and is not run.
func documentedCommands(t *testing.T, files []string) []documented {
	t.Helper()
	var out []documented
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		inSh, cont := false, ""
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if inSh && strings.HasSuffix(line, "\\") { // continued on the next line
				cont += strings.TrimSuffix(line, "\\") + " "
				continue
			}
			line, cont = cont+line, ""
			switch {
			case strings.HasPrefix(line, "```"):
				inSh = line == "```sh"
				continue
			case !inSh:
				continue
			}
			if c, ok := parseDocumented(line); ok {
				c.where = path + ":" + strconv.Itoa(n)
				out = append(out, c)
			}
		}
		f.Close()
	}
	return out
}

func parseDocumented(line string) (documented, bool) {
	var c documented
	if m := exitsNote.FindStringSubmatch(line); m != nil {
		c.exit, _ = strconv.Atoi(m[1])
	}
	line, _, _ = strings.Cut(line, "#")
	line, _, _ = strings.Cut(line, ";")
	line = strings.TrimPrefix(strings.TrimSpace(line), "./")
	rest, ok := strings.CutPrefix(line, "sagebench ")
	if !ok || strings.ContainsAny(rest, "$|&<>'\"…") {
		return c, false
	}
	c.args = strings.Fields(rest)
	return c, len(c.args) > 0 && !slices.Contains(notRunHere, c.args[0])
}

// TestDocumentedCommands runs every `sagebench` command shown in README.md,
// docs/ and examples/ through Main, from the repository root, and checks
// its exit status (0, or the "# exits N" the line states). A `run` or
// `paper` is executed as --dry-run: it resolves and validates everything,
// sends and writes nothing.
func TestDocumentedCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "examples", "README.md"))
	cmds := documentedCommands(t, files)
	if len(cmds) < 5 {
		t.Fatalf("found %d documented commands; the parser lost them", len(cmds))
	}
	t.Chdir(root)
	for _, c := range cmds {
		args := c.args
		if (args[0] == "run" || args[0] == "paper") && !slices.Contains(args, "--dry-run") {
			args = append(slices.Clone(args), "--dry-run")
		}
		var out, errb strings.Builder
		if code := Main(context.Background(), args, &out, &errb); code != c.exit {
			rel, _ := filepath.Rel(root, c.where)
			t.Errorf("%s: sagebench %s: exit %d, want %d\n%s", rel, strings.Join(args, " "), code, c.exit, errb.String())
		}
	}
}
