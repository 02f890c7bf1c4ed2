package dave

import (
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"

	"golang.org/x/crypto/cryptobyte"
)

// Creating groups and commits, for when this member is the one to commit
// the voice gateway's proposals: DAVE has every member commit and the
// gateway announce the first commit it gets (libdave's ProcessProposals).

// newGroup creates the one-member group (RFC 9420 §11) DAVE calls the
// pending group: this member's leaf, and the voice gateway as the group's
// one external sender.
func newGroup(groupID []byte, leaf *leafNode, leafPriv []byte, sig *ecdsa.PrivateKey, sender []byte) (*group, error) {
	t := &tree{nodes: []*node{{leaf: leaf}}}
	g := &group{
		ctx: groupContext{
			groupID:    groupID,
			treeHash:   t.rootHash(),
			extensions: []extension{{typ: extExternalSenders, data: marshal(func(b *cryptobyte.Builder) { addOpaque(b, sender) })}},
		},
		tree:     t,
		sig:      sig,
		nodeKeys: map[uint32][]byte{0: leafPriv},
	}
	// §11: a random init_secret and an all-zero commit_secret.
	init := make([]byte, hashSize)
	if _, err := rand.Read(init); err != nil {
		return nil, err
	}
	joiner := expandWithLabel(extract(init, make([]byte, hashSize)), "joiner", g.ctx.bytes(), hashSize)
	g.secrets = keySchedule(joiner, nil, &g.ctx)
	g.interim = interimTranscriptHash(g.ctx.confirmedTranscriptHash, mac(g.secrets.confirmation, g.ctx.confirmedTranscriptHash))
	if err := g.readExternalSenders(); err != nil {
		return nil, err
	}
	return g, nil
}

func (u *updatePath) add(b *cryptobyte.Builder) {
	u.leaf.add(b)
	addVec(b, func(b *cryptobyte.Builder) {
		for _, n := range u.nodes {
			addOpaque(b, n.encryptionKey)
			addVec(b, func(b *cryptobyte.Builder) {
				for _, c := range n.secrets {
					c.add(b)
				}
			})
		}
	})
}

func (c *commit) add(b *cryptobyte.Builder) {
	addVec(b, func(b *cryptobyte.Builder) {
		for _, r := range c.refs {
			b.AddUint8(2) // ProposalOrRefType reference
			addOpaque(b, r)
		}
	})
	addBool(b, c.path != nil)
	if c.path != nil {
		c.path.add(b)
	}
}

// commitOutput is a commit this member made: the MLSMessage to send, the
// Welcome for the members it adds (nil if none), and the group it leads to
// once the voice gateway announces it.
type commitOutput struct {
	message []byte
	welcome []byte
	next    *group
}

// commitProposals commits every queued proposal by reference (RFC 9420
// §12.4.1), with an update path only when someone is removed (libdave
// does not force one), and a Welcome with the ratchet tree for the added
// members. g is left as it was.
func (g *group) commitProposals(rnd io.Reader) (*commitOutput, error) {
	props := make([]*proposal, len(g.proposals))
	refs := make([][]byte, len(g.proposals))
	for i, p := range g.proposals {
		props[i], refs[i] = p.proposal, p.ref
	}
	next, adds, added, removes, err := g.nextWith(props)
	if err != nil {
		return nil, err
	}
	c := &commit{refs: refs}
	commitSecret := make([]byte, hashSize)
	var pathSecrets map[uint32][]byte
	if removes {
		if c.path, commitSecret, pathSecrets, err = next.createPath(rnd, added); err != nil {
			return nil, err
		}
	}
	next.ctx.treeHash = next.tree.rootHash()

	content := marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, g.ctx.groupID)
		b.AddUint64(g.ctx.epoch)
		b.AddUint8(senderMember)
		b.AddUint32(g.own)
		addOpaque(b, nil) // authenticated_data
		b.AddUint8(contentCommit)
		c.add(b)
	})
	f := &framedContent{senderType: senderMember, raw: content}
	tbs := f.tbs(&g.ctx)
	sig, err := signWithLabel(g.sig, "FramedContentTBS", tbs)
	if err != nil {
		return nil, err
	}
	next.ctx.confirmedTranscriptHash = hash(g.interim, marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(wirePublic)
		b.AddBytes(content)
		addOpaque(b, sig)
	}))
	joiner := expandWithLabel(extract(g.secrets.init, commitSecret), "joiner", next.ctx.bytes(), hashSize)
	next.secrets = keySchedule(joiner, nil, &next.ctx)
	confirmTag := mac(next.secrets.confirmation, next.ctx.confirmedTranscriptHash)
	next.interim = interimTranscriptHash(next.ctx.confirmedTranscriptHash, confirmTag)

	authData := marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, sig)
		addOpaque(b, confirmTag)
	})
	membershipTag := mac(g.secrets.membership, append(slices.Clone(tbs), authData...))
	out := &commitOutput{next: next}
	out.message = marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(protocolVersion)
		b.AddUint16(wirePublic)
		b.AddBytes(content)
		b.AddBytes(authData)
		addOpaque(b, membershipTag)
	})
	if len(adds) > 0 {
		if out.welcome, err = next.welcome(rnd, joiner, confirmTag, adds, added, pathSecrets); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// createPath makes a fresh update path for this member's leaf (RFC 9420
// §7.4-§7.6) in the tree of the next epoch, which already holds the
// proposals' changes: a new leaf key, a path secret per node of the
// filtered direct path, each encrypted to the resolution of the node's
// copath child (the leaves just added left out). It returns the path,
// the commit secret and the path secret of each path node.
func (g *group) createPath(rnd io.Reader, added []uint32) (*updatePath, []byte, map[uint32][]byte, error) {
	t := g.tree
	x := leafNodeIndex(g.own)
	path := t.filteredDirectPath(x)
	leafKey, err := newHPKEKey()
	if err != nil {
		return nil, nil, nil, err
	}
	secret := make([]byte, hashSize)
	if _, err := io.ReadFull(rnd, secret); err != nil {
		return nil, nil, nil, err
	}
	secrets := map[uint32][]byte{}
	pubs := make([][]byte, len(path))
	for i, p := range path {
		kp, err := deriveHPKEKey(deriveSecret(secret, "node"))
		if err != nil {
			return nil, nil, nil, err
		}
		secrets[p] = secret
		pubs[i] = kp.pub
		g.nodeKeys[p] = kp.priv
		secret = deriveSecret(secret, "path")
	}
	commitSecret := secret

	for _, p := range directPath(x, t.leaves()) {
		if _, ok := secrets[p]; !ok {
			delete(g.nodeKeys, p)
		}
	}
	old := t.leaf(g.own)
	leaf := *old
	leaf.encryptionKey = leafKey.pub
	leaf.source = sourceCommit
	leaf.notBefore, leaf.notAfter = 0, 0
	leaf.parentHash = t.setPath(x, path, pubs)
	if leaf.signature, err = signWithLabel(g.sig, "LeafNodeTBS", leaf.tbs(g.ctx.groupID, g.own)); err != nil {
		return nil, nil, nil, err
	}
	t.nodes[x] = &node{leaf: &leaf}
	g.nodeKeys[x] = leafKey.priv

	// §12.4.2: path secrets are encrypted under the provisional group
	// context: the new epoch and tree, the old transcript hash.
	provisional := g.ctx
	provisional.treeHash = t.rootHash()
	up := &updatePath{leaf: leaf}
	for _, p := range path {
		copath := left(p)
		if inSubtree(x, copath) {
			copath = right(p)
		}
		n := updatePathNode{encryptionKey: t.nodes[p].parent.encryptionKey}
		for _, r := range t.resolution(copath) {
			if level(r) == 0 && slices.Contains(added, r/2) {
				continue
			}
			var pub []byte
			if rn := t.nodes[r]; rn.leaf != nil {
				pub = rn.leaf.encryptionKey
			} else {
				pub = rn.parent.encryptionKey
			}
			ct, err := encryptWithLabel(rnd, pub, "UpdatePathNode", provisional.bytes(), secrets[p])
			if err != nil {
				return nil, nil, nil, fmt.Errorf("encrypting the path secret of node %d: %w", p, err)
			}
			n.secrets = append(n.secrets, ct)
		}
		up.nodes = append(up.nodes, n)
	}
	return up, commitSecret, secrets, nil
}

// welcome makes the Welcome for the members a commit added (RFC 9420
// §12.4.3): the GroupInfo, with the ratchet tree, signed and encrypted
// under the welcome secret, and each new member's GroupSecrets encrypted
// to its init key. DAVE sends it bare, not in an MLSMessage.
func (g *group) welcome(rnd io.Reader, joiner, confirmTag []byte, adds []*keyPackage, added []uint32, pathSecrets map[uint32][]byte) ([]byte, error) {
	tbs := marshal(func(b *cryptobyte.Builder) {
		g.ctx.add(b)
		addExtensions(b, []extension{{typ: extRatchetTree, data: g.tree.bytes()}})
		addOpaque(b, confirmTag)
		b.AddUint32(g.own)
	})
	sig, err := signWithLabel(g.sig, "GroupInfoTBS", tbs)
	if err != nil {
		return nil, err
	}
	info := marshal(func(b *cryptobyte.Builder) {
		b.AddBytes(tbs)
		addOpaque(b, sig)
	})
	welcomeSecret := deriveSecret(extract(joiner, make([]byte, hashSize)), "welcome")
	aead, err := newGCM(expandWithLabel(welcomeSecret, "key", nil, aeadKey))
	if err != nil {
		return nil, err
	}
	encInfo := aead.Seal(nil, expandWithLabel(welcomeSecret, "nonce", nil, aeadNonce), info, nil)

	type entry struct {
		ref []byte
		ct  hpkeCiphertext
	}
	var entries []entry
	for i, kp := range adds {
		// The path secret of the lowest node of our path above the new
		// member, if there is a path.
		var ps []byte
		for _, p := range g.tree.filteredDirectPath(leafNodeIndex(g.own)) {
			if s, ok := pathSecrets[p]; ok && inSubtree(leafNodeIndex(added[i]), p) {
				ps = s
				break
			}
		}
		secrets := marshal(func(b *cryptobyte.Builder) {
			addOpaque(b, joiner)
			addBool(b, ps != nil)
			if ps != nil {
				addOpaque(b, ps)
			}
			addVec(b, func(*cryptobyte.Builder) {}) // no PSKs
		})
		ct, err := encryptWithLabel(rnd, kp.initKey, "Welcome", encInfo, secrets)
		if err != nil {
			return nil, fmt.Errorf("encrypting group secrets: %w", err)
		}
		entries = append(entries, entry{kp.ref(), ct})
	}
	if len(entries) == 0 {
		return nil, errors.New("welcome with no new member")
	}
	return marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(cipherSuite)
		addVec(b, func(b *cryptobyte.Builder) {
			for _, e := range entries {
				addOpaque(b, e.ref)
				e.ct.add(b)
			}
		})
		addOpaque(b, encInfo)
	}), nil
}
