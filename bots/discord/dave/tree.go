package dave

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"golang.org/x/crypto/cryptobyte"
)

// The ratchet tree (RFC 9420 §4, §7) in its array form (Appendix C): node
// x of a tree with n leaves (n a power of two) sits at index x; leaves at
// even indices (leaf i at 2i), parents at odd ones.

// level is the number of trailing one bits of x: 0 for leaves.
func level(x uint32) int { return bits.TrailingZeros32(^x) }

func nodeWidth(leaves uint32) uint32 {
	if leaves == 0 {
		return 0
	}
	return 2*(leaves-1) + 1
}

func root(leaves uint32) uint32 {
	w := nodeWidth(leaves)
	return (1 << (bits.Len32(w) - 1)) - 1
}

func left(x uint32) uint32 {
	k := level(x)
	return x ^ (1 << (k - 1))
}

func right(x uint32) uint32 {
	k := level(x)
	return x ^ (3 << (k - 1))
}

func parent(x uint32) uint32 {
	k := level(x)
	b := (x >> (k + 1)) & 1
	return (x | (1 << k)) ^ (b << (k + 1))
}

func sibling(x uint32) uint32 {
	p := parent(x)
	if x < p {
		return right(p)
	}
	return left(p)
}

// directPath lists x's ancestors from its parent up to the root.
func directPath(x, leaves uint32) []uint32 {
	r := root(leaves)
	var path []uint32
	for x != r {
		x = parent(x)
		path = append(path, x)
	}
	return path
}

// inSubtree reports whether node x is in the subtree under node p.
func inSubtree(x, p uint32) bool {
	k := level(p)
	return x>>(k+1) == p>>(k+1)
}

func leafNodeIndex(leaf uint32) uint32 { return 2 * leaf }

// parentNode is RFC 9420 §7.1's ParentNode.
type parentNode struct {
	encryptionKey  []byte
	parentHash     []byte
	unmergedLeaves []uint32
}

func (p *parentNode) read(s *cryptobyte.String) bool {
	return readOpaque(s, &p.encryptionKey) && readOpaque(s, &p.parentHash) &&
		readList(s, func(v *cryptobyte.String) bool {
			var l uint32
			if !v.ReadUint32(&l) {
				return false
			}
			p.unmergedLeaves = append(p.unmergedLeaves, l)
			return true
		})
}

func (p *parentNode) add(b *cryptobyte.Builder) {
	addOpaque(b, p.encryptionKey)
	addOpaque(b, p.parentHash)
	addVec(b, func(b *cryptobyte.Builder) {
		for _, l := range p.unmergedLeaves {
			b.AddUint32(l)
		}
	})
}

// Node types (RFC 9420 §7.8).
const (
	nodeLeaf   uint8 = 1
	nodeParent uint8 = 2
)

// node is one slot of the tree; a blank slot is a nil *node.
type node struct {
	leaf   *leafNode
	parent *parentNode
}

// tree is a ratchet tree; len(nodes) == nodeWidth(leaves).
type tree struct {
	nodes []*node
}

func (t *tree) leaves() uint32 { return (uint32(len(t.nodes)) + 1) / 2 }

func (t *tree) leaf(i uint32) *leafNode {
	n := t.nodes[leafNodeIndex(i)]
	if n == nil {
		return nil
	}
	return n.leaf
}

func (t *tree) clone() *tree {
	c := &tree{nodes: make([]*node, len(t.nodes))}
	for i, n := range t.nodes {
		if n == nil {
			continue
		}
		cn := &node{leaf: n.leaf}
		if n.parent != nil {
			p := *n.parent
			p.unmergedLeaves = slices.Clone(p.unmergedLeaves)
			cn.parent = &p
		}
		c.nodes[i] = cn
	}
	return c
}

// readTree decodes the ratchet_tree extension (RFC 9420 §12.4.3.3): a
// vector of optional<Node> whose trailing blanks are left out; it is padded
// back to a full tree.
func readTree(data []byte) (*tree, error) {
	s := cryptobyte.String(data)
	t := &tree{}
	ok := readList(&s, func(v *cryptobyte.String) bool {
		var present bool
		if !readOptional(v, &present) {
			return false
		}
		if !present {
			t.nodes = append(t.nodes, nil)
			return true
		}
		var typ uint8
		if !v.ReadUint8(&typ) {
			return false
		}
		n := &node{}
		switch typ {
		case nodeLeaf:
			n.leaf = &leafNode{}
			if !n.leaf.read(v) {
				return false
			}
		case nodeParent:
			n.parent = &parentNode{}
			if !n.parent.read(v) {
				return false
			}
		default:
			return false
		}
		// A node's type must match its position: leaves at even indices.
		if (len(t.nodes)%2 == 0) != (typ == nodeLeaf) {
			return false
		}
		t.nodes = append(t.nodes, n)
		return true
	})
	if !ok || !s.Empty() {
		return nil, fmt.Errorf("ratchet tree: %w", errShort)
	}
	if len(t.nodes) == 0 || len(t.nodes)%2 == 0 || t.nodes[len(t.nodes)-1] == nil {
		return nil, errors.New("ratchet tree: node count must be odd and the last node non-blank")
	}
	leaves := uint32(1)
	for nodeWidth(leaves) < uint32(len(t.nodes)) {
		leaves *= 2
	}
	for uint32(len(t.nodes)) < nodeWidth(leaves) {
		t.nodes = append(t.nodes, nil)
	}
	return t, nil
}

// bytes encodes the tree for the ratchet_tree extension, trailing blanks
// left out.
func (t *tree) bytes() []byte {
	end := len(t.nodes)
	for end > 0 && t.nodes[end-1] == nil {
		end--
	}
	return marshal(func(b *cryptobyte.Builder) {
		addVec(b, func(b *cryptobyte.Builder) {
			for _, n := range t.nodes[:end] {
				if n == nil {
					b.AddUint8(0)
					continue
				}
				b.AddUint8(1)
				if n.leaf != nil {
					b.AddUint8(nodeLeaf)
					n.leaf.add(b)
				} else {
					b.AddUint8(nodeParent)
					n.parent.add(b)
				}
			}
		})
	})
}

// resolution is RFC 9420 §4.1.1's resolution of node x.
func (t *tree) resolution(x uint32) []uint32 {
	n := t.nodes[x]
	switch {
	case n != nil && n.leaf != nil:
		return []uint32{x}
	case n != nil:
		out := []uint32{x}
		for _, l := range n.parent.unmergedLeaves {
			out = append(out, leafNodeIndex(l))
		}
		return out
	case level(x) == 0:
		return nil
	default:
		return append(t.resolution(left(x)), t.resolution(right(x))...)
	}
}

// treeHash is RFC 9420 §7.8's tree hash of the subtree under x. Leaves in
// excluded are hashed as blank and dropped from unmerged_leaves, which is
// how §7.9's original_sibling_tree_hash is computed.
func (t *tree) treeHash(x uint32, excluded []uint32) []byte {
	n := t.nodes[x]
	if level(x) == 0 {
		leafIndex := x / 2
		var leaf *leafNode
		if n != nil && !slices.Contains(excluded, leafIndex) {
			leaf = n.leaf
		}
		return hash(marshal(func(b *cryptobyte.Builder) {
			b.AddUint8(nodeLeaf)
			b.AddUint32(leafIndex)
			addBool(b, leaf != nil)
			if leaf != nil {
				leaf.add(b)
			}
		}))
	}
	l, r := t.treeHash(left(x), excluded), t.treeHash(right(x), excluded)
	return hash(marshal(func(b *cryptobyte.Builder) {
		b.AddUint8(nodeParent)
		addBool(b, n != nil)
		if n != nil {
			p := *n.parent
			p.unmergedLeaves = slices.DeleteFunc(slices.Clone(p.unmergedLeaves), func(l uint32) bool {
				return slices.Contains(excluded, l)
			})
			p.add(b)
		}
		addOpaque(b, l)
		addOpaque(b, r)
	}))
}

func (t *tree) rootHash() []byte { return t.treeHash(root(t.leaves()), nil) }

// parentHash is RFC 9420 §7.9's parent hash of parent node p as seen from
// its child whose sibling is s: Hash(ParentHashInput{p.encryption_key,
// p.parent_hash, original_sibling_tree_hash}).
func (t *tree) parentHash(p, s uint32) []byte {
	pn := t.nodes[p].parent
	return hash(marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, pn.encryptionKey)
		addOpaque(b, pn.parentHash)
		addOpaque(b, t.treeHash(s, pn.unmergedLeaves))
	}))
}

func (t *tree) nodeParentHash(x uint32) []byte {
	n := t.nodes[x]
	if n == nil {
		return nil
	}
	if n.leaf != nil {
		if n.leaf.source != sourceCommit {
			return nil
		}
		return n.leaf.parentHash
	}
	return n.parent.parentHash
}

// verifyParentHashes makes RFC 9420 §7.9.2's check: every non-blank parent
// node P is parent-hash valid, that is some node D under P's child C
// (where S is the other child) has D.parent_hash = ParentHash(P, S), D is in
// the resolution of C, and P's unmerged leaves under C are exactly the
// resolution of C without D.
func (t *tree) verifyParentHashes() error {
	for x := uint32(1); x < uint32(len(t.nodes)); x += 2 {
		if t.nodes[x] == nil {
			continue
		}
		if !t.parentHashValid(x) {
			return fmt.Errorf("ratchet tree: parent node %d is not parent-hash valid", x)
		}
	}
	return nil
}

func (t *tree) parentHashValid(p uint32) bool {
	unmerged := t.nodes[p].parent.unmergedLeaves
	for _, c := range []uint32{left(p), right(p)} {
		s := sibling(c)
		want := t.parentHash(p, s)
		res := t.resolution(c)
		for _, d := range res {
			if !bytes.Equal(t.nodeParentHash(d), want) {
				continue
			}
			// P's unmerged leaves under C must be res minus D.
			var under []uint32
			for _, l := range unmerged {
				if inSubtree(leafNodeIndex(l), c) {
					under = append(under, leafNodeIndex(l))
				}
			}
			rest := slices.DeleteFunc(slices.Clone(res), func(x uint32) bool { return x == d })
			slices.Sort(under)
			slices.Sort(rest)
			if slices.Equal(under, rest) {
				return true
			}
		}
	}
	return false
}

// addLeaf puts a leaf in the leftmost blank leaf slot, doubling the tree if
// there is none, and adds it to the unmerged leaves of its non-blank
// ancestors (RFC 9420 §12.1.1). It returns the leaf index.
func (t *tree) addLeaf(ln *leafNode) uint32 {
	var idx uint32
	for idx = 0; idx < t.leaves(); idx++ {
		if t.nodes[leafNodeIndex(idx)] == nil {
			break
		}
	}
	if idx == t.leaves() {
		grown := make([]*node, nodeWidth(2*t.leaves()))
		copy(grown, t.nodes)
		t.nodes = grown
	}
	t.nodes[leafNodeIndex(idx)] = &node{leaf: ln}
	for _, p := range directPath(leafNodeIndex(idx), t.leaves()) {
		if n := t.nodes[p]; n != nil {
			n.parent.unmergedLeaves = append(n.parent.unmergedLeaves, idx)
		}
	}
	return idx
}

// removeLeaf blanks a leaf and its direct path, then truncates the tree
// while its right half is empty (RFC 9420 §12.1.3).
func (t *tree) removeLeaf(idx uint32) error {
	if idx >= t.leaves() || t.nodes[leafNodeIndex(idx)] == nil {
		return fmt.Errorf("remove: leaf %d is blank or outside the tree", idx)
	}
	x := leafNodeIndex(idx)
	t.nodes[x] = nil
	for _, p := range directPath(x, t.leaves()) {
		t.nodes[p] = nil
	}
	for t.leaves() > 1 {
		half := t.leaves() / 2
		empty := true
		for i := half; i < t.leaves(); i++ {
			if t.nodes[leafNodeIndex(i)] != nil {
				empty = false
				break
			}
		}
		if !empty {
			break
		}
		t.nodes = t.nodes[:nodeWidth(half)]
	}
	return nil
}

// findLeaf returns the index of the leaf equal to ln.
func (t *tree) findLeaf(ln *leafNode) (uint32, bool) {
	want := ln.bytes()
	for i := uint32(0); i < t.leaves(); i++ {
		if l := t.leaf(i); l != nil && bytes.Equal(l.bytes(), want) {
			return i, true
		}
	}
	return 0, false
}
