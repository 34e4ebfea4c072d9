package strace

import (
	"sort"
	"strings"
)

// Family is the producer a span name's leading word names.
type Family uint8

// Span name families.
const (
	FamilyUnknown Family = iota // a leading word this package does not know; kept, never dropped
	FamilyChip                  // chip.*: the L2 chip run
	FamilyCore                  // core.*
	FamilyNode                  // node.*, network1.*, network2.*, network3.*: host scheduler spans of L3..L6
	FamilyExt                   // ext.*: a producer outside the runtime
)

var familyNames = [...]string{"unknown", "chip", "core", "node", "ext"}

func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return "family(?)"
}

// HasInvocation reports whether the family's spans carry a meaningful inv:
// node-family and external spans do not, so grouping them by (pid, inv)
// would forge one invocation out of unrelated spans.
func (f Family) HasInvocation() bool { return f != FamilyNode && f != FamilyExt }

// FamilyOf classifies a span name by its leading word.
func FamilyOf(name string) Family {
	head := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		head = name[:i]
	}
	switch head {
	case "chip":
		return FamilyChip
	case "core":
		return FamilyCore
	case "node", "network1", "network2", "network3":
		return FamilyNode
	case "ext":
		return FamilyExt
	}
	return FamilyUnknown
}

// NodeLeaf returns a node-family name without its level word
// ("network1.submit" → "submit"): the same decision point at every level.
func NodeLeaf(name string) (string, bool) {
	if FamilyOf(name) != FamilyNode {
		return "", false
	}
	_, leaf, _ := strings.Cut(name, ".")
	return leaf, true
}

// ExtProducer attributes an external span "ext.<producer>.<span>" to its
// producer. All three segments must be present and non-empty: "ext.foo",
// "ext..foo" and "ext.foo." attribute to no one (ok is false), though they
// are still external. The producer may itself be a level word
// ("ext.host.foo" is producer "host").
func ExtProducer(name string) (producer, span string, ok bool) {
	if FamilyOf(name) != FamilyExt {
		return "", "", false
	}
	rest := name[len("ext."):]
	producer, span, found := strings.Cut(rest, ".")
	if !found || producer == "" || span == "" {
		return "", "", false
	}
	first, _, _ := strings.Cut(span, ".")
	if first == "" {
		return "", "", false
	}
	return producer, span, true
}

// Node is a span in its invocation's tree.
type Node struct {
	Span     *Span
	Index    int // position of the span in the input order of its invocation
	Parent   *Node
	Children []*Node // in input order
	// DepthMismatch marks a node attached by name whose depth is not its
	// parent's plus one (a pipelined run logs chip.run.bind.compatibility
	// at depth 1): the name is the evidence that holds.
	DepthMismatch bool
}

// Orphan is a span whose parent, named by its dotted prefix, never appears.
type Orphan struct {
	Node   *Node
	Parent string // the name that was looked for
}

// Invocation is one run: the spans of one (pid, inv).
type Invocation struct {
	Pid     int32
	Inv     uint64
	Hid     uint64 // the hid of its first span
	Spans   []*Span
	Roots   []*Node  // depth-0 spans with no parent named, in input order
	Orphans []Orphan // in input order
	Nodes   []*Node  // one per span, in input order
}

// Root returns the first root named name, or the first root when name is "".
func (inv *Invocation) Root(name string) *Node {
	for _, n := range inv.Roots {
		if name == "" || n.Span.Name == name {
			return n
		}
	}
	return nil
}

// Find returns the first span named name.
func (inv *Invocation) Find(name string) *Span {
	for _, s := range inv.Spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

type invKey struct {
	pid int32
	inv uint64
}

// GroupInvocations groups spans by (pid, inv) and rebuilds each group's
// tree; spans whose family carries no invocation (node, ext) are left out.
// Invocations come ordered by pid, then inv. The spans are referenced, not
// copied: they must own their Attrs (see Span.Clone).
func GroupInvocations(spans []Span) []*Invocation {
	groups := make(map[invKey]*Invocation)
	var order []*Invocation
	for i := range spans {
		s := &spans[i]
		if !FamilyOf(s.Name).HasInvocation() {
			continue
		}
		k := invKey{s.Pid, s.Inv}
		g := groups[k]
		if g == nil {
			g = &Invocation{Pid: s.Pid, Inv: s.Inv, Hid: s.Hid}
			groups[k] = g
			order = append(order, g)
		}
		g.Spans = append(g.Spans, s)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].Pid != order[j].Pid {
			return order[i].Pid < order[j].Pid
		}
		return order[i].Inv < order[j].Inv
	})
	for _, g := range order {
		g.buildTree()
	}
	return order
}

// buildTree links each span to its parent: the span named by its dotted
// prefix, preferring one at depth-1 and then the nearest in input order.
// Timestamps are never used: host and device spans are on different clocks.
func (inv *Invocation) buildTree() {
	inv.Nodes = make([]*Node, len(inv.Spans))
	byName := make(map[string][]int, len(inv.Spans))
	for i, s := range inv.Spans {
		inv.Nodes[i] = &Node{Span: s, Index: i}
		byName[s.Name] = append(byName[s.Name], i)
	}
	for i, n := range inv.Nodes {
		s := n.Span
		dot := strings.LastIndexByte(s.Name, '.')
		var cands []int
		if dot > 0 {
			cands = byName[s.Name[:dot]]
		}
		if len(cands) == 0 {
			if s.Depth == 0 || dot <= 0 {
				inv.Roots = append(inv.Roots, n)
			} else {
				inv.Orphans = append(inv.Orphans, Orphan{Node: n, Parent: s.Name[:dot]})
			}
			continue
		}
		best := -1
		for _, c := range cands {
			if best < 0 || better(inv.Spans, i, c, best) {
				best = c
			}
		}
		p := inv.Nodes[best]
		n.Parent = p
		n.DepthMismatch = p.Span.Depth+1 != s.Depth
		p.Children = append(p.Children, n)
	}
	for _, n := range inv.Nodes {
		sort.SliceStable(n.Children, func(a, b int) bool { return n.Children[a].Index < n.Children[b].Index })
	}
}

// better reports whether candidate parent c beats b for span i.
func better(spans []*Span, i, c, b int) bool {
	want := spans[i].Depth - 1
	cd, bd := spans[c].Depth == want, spans[b].Depth == want
	if cd != bd {
		return cd
	}
	return absInt(c-i) < absInt(b-i)
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Role is what a callable's invocation count says it is.
type Role uint8

// Roles of a hid bucket.
const (
	RoleOther   Role = iota
	RoleDecode       // the most-invoked hid (one invocation per token)
	RolePrefill      // a hid invoked once
)

var roleNames = [...]string{"other", "decode", "prefill"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(?)"
}

// HidBucket is the invocations of one callable hash.
type HidBucket struct {
	Hid         uint64
	Role        Role
	Invocations []*Invocation // ordered by inv
}

// BucketByHid groups invocations by hid, most invoked first (ties by hid).
// The first bucket is RoleDecode when it holds more than one invocation;
// buckets of one invocation are RolePrefill.
func BucketByHid(invs []*Invocation) []HidBucket {
	idx := make(map[uint64]int)
	var out []HidBucket
	for _, inv := range invs {
		i, ok := idx[inv.Hid]
		if !ok {
			i = len(out)
			idx[inv.Hid] = i
			out = append(out, HidBucket{Hid: inv.Hid})
		}
		out[i].Invocations = append(out[i].Invocations, inv)
	}
	for i := range out {
		b := out[i].Invocations
		sort.SliceStable(b, func(x, y int) bool { return b[x].Inv < b[y].Inv })
	}
	sort.SliceStable(out, func(x, y int) bool {
		if nx, ny := len(out[x].Invocations), len(out[y].Invocations); nx != ny {
			return nx > ny
		}
		return out[x].Hid < out[y].Hid
	})
	for i := range out {
		switch n := len(out[i].Invocations); {
		case i == 0 && n > 1:
			out[i].Role = RoleDecode
		case n == 1:
			out[i].Role = RolePrefill
		}
	}
	return out
}
