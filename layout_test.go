package phasetrace

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// stageOrder orders the root package's stages by what may refer to what
// (engine.go, "The root package, by stage"): a file refers only to its own
// stage and to later ones. The front door's entry points drive the engine,
// the engine every stage; drawing reads the plan and the survey, the plan
// the survey; every stage counts in the account; the summary's and the
// options' types are everyone's.
var stageOrder = []string{"front", "engine", "draw", "plan", "survey", "account", "types"}

// stageOf returns the stage of a file of the root package, by its name.
func stageOf(file string) string {
	b := filepath.Base(file)
	switch b {
	case "survey.go":
		return "survey"
	case "account.go":
		return "account"
	case "summary.go", "reasons.go", "options.go", "input.go", "version.go", "doc.go":
		return "types"
	}
	if strings.HasPrefix(b, "summary_") {
		return "types"
	}
	for _, p := range []string{"engine", "plan_", "draw_", "account_"} {
		if strings.HasPrefix(b, p) {
			return strings.TrimSuffix(p, "_")
		}
	}
	return "front"
}

// TestStagesReferOneWay checks that no file refers to a declaration of a
// stage before its own in stageOrder: a stage never reaches back into the
// one that drives it or into a later one of the pipeline.
func TestStagesReferOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package from source")
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/phasetrace/phasetrace", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for i, s := range stageOrder {
		rank[s] = i
	}
	seen := map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && v.Parent() != pkg.Scope() {
			continue // a local variable
		}
		from, to := fset.Position(id.Pos()).Filename, fset.Position(obj.Pos()).Filename
		if rank[stageOf(to)] >= rank[stageOf(from)] {
			continue
		}
		key := filepath.Base(from) + " → " + filepath.Base(to) + ": " + id.Name
		if !seen[key] {
			seen[key] = true
			t.Errorf("%s: the %s stage refers back to the %s stage", key, stageOf(from), stageOf(to))
		}
	}
}
