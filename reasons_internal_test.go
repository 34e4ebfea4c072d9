package phasetrace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/phasetrace/phasetrace/reduce"
)

// Every cause reduce gives of a run not aligned is counted under a
// declared reason of its own.
func TestEveryCauseHasAReason(t *testing.T) {
	seen := map[Reason]reduce.Cause{}
	for c := reduce.Cause(1); c != 0; c <<= 1 {
		if reduce.AllCauses&c == 0 {
			continue
		}
		var m ReasonCounts
		bumpCauses(&m, c, 1)
		if len(m) != 1 {
			t.Errorf("cause %#x counted under %v, want one reason", c, m)
			continue
		}
		for r := range m {
			if _, ok := reasonRows[r]; !ok || r == ReasonPlacementUnexplained {
				t.Errorf("cause %#x counted under %q, not a reason of its own", c, r)
			}
			if o, dup := seen[r]; dup {
				t.Errorf("causes %#x and %#x share the reason %q", o, c, r)
			}
			seen[r] = c
		}
	}
	if len(seen) == 0 {
		t.Fatal("reduce declares no causes")
	}
}

// TestReasonTable checks reasonTable against the Reason constants of
// reasons.go, read from its source: every constant has a row, in the
// constants' order, every row is a constant's, has a text of its own and
// no id is there twice.
func TestReasonTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []Reason
	names := map[Reason]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "Reason" {
				continue
			}
			for i, n := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", n.Name)
				}
				id, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if o, dup := names[Reason(id)]; dup {
					t.Errorf("%s and %s are both %q", o, n.Name, id)
				}
				names[Reason(id)] = n.Name
				declared = append(declared, Reason(id))
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("reasons.go declares no Reason constants")
	}
	rows := map[Reason]bool{}
	for i, row := range reasonTable {
		if rows[row.id] {
			t.Errorf("row %d: %q has a row already", i, row.id)
		}
		rows[row.id] = true
		if _, ok := names[row.id]; !ok {
			t.Errorf("row %d: %q is not a constant of reasons.go", i, row.id)
		}
		if row.text == "" || row.text == string(row.id) {
			t.Errorf("row %d: %q has no text", i, row.id)
		}
		if i < len(declared) && row.id != declared[i] {
			t.Errorf("row %d is %q, want %s (%q): the rows follow the constants", i, row.id, names[declared[i]], declared[i])
		}
	}
	for _, r := range declared {
		if !rows[r] {
			t.Errorf("%s (%q) has no row in reasonTable", names[r], r)
		}
	}
}
