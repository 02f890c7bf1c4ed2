package dave

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/hmac"
	"errors"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/crypto/cryptobyte"
)

// epochSecrets are the secrets of RFC 9420 §8's key schedule that a DAVE
// member needs (no PrivateMessages, so no encryption or sender-data
// secret).
type epochSecrets struct {
	init               []byte
	exporter           []byte
	confirmation       []byte
	membership         []byte
	epochAuthenticator []byte
}

// keySchedule runs RFC 9420 §8 from the joiner secret; DAVE uses no PSKs,
// so psk_secret is nil (Nh zero bytes) but for the test vectors.
func keySchedule(joinerSecret, pskSecret []byte, ctx *groupContext) epochSecrets {
	if pskSecret == nil {
		pskSecret = make([]byte, hashSize)
	}
	member := extract(joinerSecret, pskSecret)
	epoch := expandWithLabel(member, "epoch", ctx.bytes(), hashSize)
	return epochSecrets{
		init:               deriveSecret(epoch, "init"),
		exporter:           deriveSecret(epoch, "exporter"),
		confirmation:       deriveSecret(epoch, "confirm"),
		membership:         deriveSecret(epoch, "membership"),
		epochAuthenticator: deriveSecret(epoch, "authentication"),
	}
}

func interimTranscriptHash(confirmed, confirmationTag []byte) []byte {
	return hash(confirmed, marshal(func(b *cryptobyte.Builder) { addOpaque(b, confirmationTag) }))
}

// pendingProposal is a proposal from the external sender waiting for the
// commit that references it.
type pendingProposal struct {
	ref      []byte
	proposal *proposal
}

// group is one member's view of an MLS group (RFC 9420 §8-§12): enough to
// join by Welcome, follow commits of add and remove proposals, and export
// secrets.
type group struct {
	ctx       groupContext
	tree      *tree
	own       uint32
	sig       *ecdsa.PrivateKey
	nodeKeys  map[uint32][]byte // HPKE private keys by node index, own leaf included
	interim   []byte
	secrets   epochSecrets
	senders   []externalSender
	proposals []pendingProposal
}

// ErrRemoved is returned by a commit that removes this member.
var ErrRemoved = errors.New("dave: this member was removed from the group")

// openWelcome finds the group secrets for key package kp in a Welcome,
// decrypts them with kp's init key, and decrypts the GroupInfo with the
// welcome secret (RFC 9420 §12.4.3.1 steps 1-3; §8 for the secrets).
func openWelcome(data []byte, kp *keyPackage, initPriv []byte) (*groupSecrets, *groupInfo, error) {
	w, err := parseWelcome(data)
	if err != nil {
		return nil, nil, err
	}
	ref := kp.ref()
	var mine *encryptedGroupSecrets
	for i := range w.secrets {
		if bytes.Equal(w.secrets[i].newMember, ref) {
			mine = &w.secrets[i]
		}
	}
	if mine == nil {
		return nil, nil, errors.New("welcome: no group secrets for this key package")
	}
	plain, err := decryptWithLabel(initPriv, "Welcome", w.encryptedGroupInfo, mine.secrets)
	if err != nil {
		return nil, nil, fmt.Errorf("welcome: group secrets: %w", err)
	}
	gs, err := parseGroupSecrets(plain)
	if err != nil {
		return nil, nil, fmt.Errorf("welcome: %w", err)
	}
	member := extract(gs.joinerSecret, make([]byte, hashSize))
	welcomeSecret := deriveSecret(member, "welcome")
	aead, err := newGCM(expandWithLabel(welcomeSecret, "key", nil, aeadKey))
	if err != nil {
		return nil, nil, err
	}
	giBytes, err := aead.Open(nil, expandWithLabel(welcomeSecret, "nonce", nil, aeadNonce), w.encryptedGroupInfo, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("welcome: group info: %w", errDecrypt)
	}
	gi, err := parseGroupInfo(giBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("welcome: %w", err)
	}
	return gs, gi, nil
}

// joinGroup processes a Welcome for the key package kp (RFC 9420
// §12.4.3.1): it checks the GroupInfo's signature, the ratchet tree from
// its ratchet_tree extension, and the confirmation tag.
func joinGroup(data []byte, kp *keyPackage, initPriv, leafPriv []byte, sig *ecdsa.PrivateKey) (*group, error) {
	gs, gi, err := openWelcome(data, kp, initPriv)
	if err != nil {
		return nil, err
	}
	treeData, ok := findExtension(gi.extensions, extRatchetTree)
	if !ok {
		return nil, errors.New("welcome: group info has no ratchet_tree extension (DAVE sends the tree inline)")
	}
	t, err := readTree(treeData)
	if err != nil {
		return nil, fmt.Errorf("welcome: %w", err)
	}
	if err := validateTree(t, gi.context.groupID); err != nil {
		return nil, fmt.Errorf("welcome: %w", err)
	}
	if !bytes.Equal(t.rootHash(), gi.context.treeHash) {
		return nil, errors.New("welcome: the ratchet tree's hash differs from the group context's tree_hash")
	}
	if gi.signer >= t.leaves() || t.leaf(gi.signer) == nil {
		return nil, fmt.Errorf("welcome: group info signer %d is not a member", gi.signer)
	}
	if err := verifyWithLabel(t.leaf(gi.signer).signatureKey, "GroupInfoTBS", gi.tbs, gi.signature); err != nil {
		return nil, fmt.Errorf("welcome: group info: %w", err)
	}
	own, ok := t.findLeaf(&kp.leaf)
	if !ok {
		return nil, errors.New("welcome: the tree does not hold this key package's leaf")
	}

	g := &group{ctx: gi.context, tree: t, own: own, sig: sig, nodeKeys: map[uint32][]byte{leafNodeIndex(own): leafPriv}}
	if gs.pathSecret != nil {
		// The path secret is the one of the lowest common ancestor of the
		// signer's and our leaves on the signer's filtered direct path.
		if err := g.adoptPathSecrets(gi.signer, gs.pathSecret); err != nil {
			return nil, fmt.Errorf("welcome: %w", err)
		}
	}

	secrets := keySchedule(gs.joinerSecret, nil, &g.ctx)
	if !hmac.Equal(mac(secrets.confirmation, g.ctx.confirmedTranscriptHash), gi.confirmTag) {
		return nil, errors.New("welcome: confirmation tag does not verify")
	}
	g.secrets = secrets
	g.interim = interimTranscriptHash(g.ctx.confirmedTranscriptHash, gi.confirmTag)
	if err := g.readExternalSenders(); err != nil {
		return nil, fmt.Errorf("welcome: %w", err)
	}
	return g, nil
}

// adoptPathSecrets derives the node keys above the lowest common ancestor
// of our leaf and committer's leaf from that ancestor's path secret, and
// checks them against the tree's public keys (§12.4.3.1 step 7). It
// returns the commit secret.
func (g *group) adoptPathSecrets(committer uint32, pathSecret []byte) error {
	path := g.tree.filteredDirectPath(leafNodeIndex(committer))
	start := -1
	for i, p := range path {
		if inSubtree(leafNodeIndex(g.own), p) {
			start = i
			break
		}
	}
	if start < 0 {
		return errors.New("path secret: no common ancestor on the committer's path")
	}
	secret := pathSecret
	for _, p := range path[start:] {
		kp, err := deriveHPKEKey(deriveSecret(secret, "node"))
		if err != nil {
			return err
		}
		n := g.tree.nodes[p]
		if n == nil || n.parent == nil || !bytes.Equal(n.parent.encryptionKey, kp.pub) {
			return fmt.Errorf("path secret: derived key differs from node %d's public key", p)
		}
		g.nodeKeys[p] = kp.priv
		secret = deriveSecret(secret, "path")
	}
	return nil
}

// filteredDirectPath is RFC 9420 §4.1.2's filtered direct path of x:
// its direct path without the nodes whose copath child has an empty
// resolution.
func (t *tree) filteredDirectPath(x uint32) []uint32 {
	var out []uint32
	child := x
	for _, p := range directPath(x, t.leaves()) {
		if len(t.resolution(sibling(child))) > 0 {
			out = append(out, p)
		}
		child = p
	}
	return out
}

// validateTree checks what RFC 9420 §12.4.3.1 asks of a received tree
// besides its hash: leaf signatures, unique keys, and parent hashes.
func validateTree(t *tree, groupID []byte) error {
	seenSig := map[string]bool{}
	seenEnc := map[string]bool{}
	for i := uint32(0); i < t.leaves(); i++ {
		l := t.leaf(i)
		if l == nil {
			continue
		}
		if err := l.verify(groupID, i); err != nil {
			return fmt.Errorf("ratchet tree: %w", err)
		}
		if seenSig[string(l.signatureKey)] || seenEnc[string(l.encryptionKey)] {
			return fmt.Errorf("ratchet tree: leaf %d repeats another member's key", i)
		}
		seenSig[string(l.signatureKey)] = true
		seenEnc[string(l.encryptionKey)] = true
	}
	for x := uint32(1); x < uint32(len(t.nodes)); x += 2 {
		if n := t.nodes[x]; n != nil {
			if seenEnc[string(n.parent.encryptionKey)] {
				return fmt.Errorf("ratchet tree: node %d repeats another node's encryption key", x)
			}
			seenEnc[string(n.parent.encryptionKey)] = true
		}
	}
	return t.verifyParentHashes()
}

func (g *group) readExternalSenders() error {
	data, ok := findExtension(g.ctx.extensions, extExternalSenders)
	g.senders = nil
	if !ok {
		return nil
	}
	s := cryptobyte.String(data)
	if !readList(&s, func(v *cryptobyte.String) bool {
		var e externalSender
		if !e.read(v) {
			return false
		}
		g.senders = append(g.senders, e)
		return true
	}) || !s.Empty() {
		return fmt.Errorf("external_senders extension: %w", errShort)
	}
	return nil
}

// exporter is RFC 9420 §8.5's MLS-Exporter.
func (g *group) exporter(label string, context []byte, length int) []byte {
	return expandWithLabel(deriveSecret(g.secrets.exporter, label), "exported", hash(context), length)
}

// addProposal verifies a proposal from an external sender (RFC 9420 §6.2,
// §12.1.8) and queues it for the commit that will reference it.
func (g *group) addProposal(f *framedContent) error {
	if f.contentType != contentProposal || f.senderType != senderExternal {
		return errors.New("proposal: DAVE proposals come from the external sender")
	}
	if !bytes.Equal(f.groupID, g.ctx.groupID) || f.epoch != g.ctx.epoch {
		return fmt.Errorf("proposal: for epoch %d of another group or epoch (at %d)", f.epoch, g.ctx.epoch)
	}
	if int(f.senderIndex) >= len(g.senders) {
		return fmt.Errorf("proposal: external sender %d unknown", f.senderIndex)
	}
	if err := verifyWithLabel(g.senders[f.senderIndex].signatureKey, "FramedContentTBS", f.tbs(nil), f.signature); err != nil {
		return fmt.Errorf("proposal: %w", err)
	}
	switch f.proposal.typ {
	case proposalAdd:
		if err := f.proposal.add.validate(); err != nil {
			return fmt.Errorf("add proposal: %w", err)
		}
	case proposalRemove:
		if f.proposal.removed >= g.tree.leaves() || g.tree.leaf(f.proposal.removed) == nil {
			return fmt.Errorf("remove proposal: leaf %d is not a member", f.proposal.removed)
		}
	}
	g.proposals = append(g.proposals, pendingProposal{ref: f.ref(), proposal: f.proposal})
	return nil
}

// revokeProposals drops queued proposals (DAVE opcode 27, revoke).
func (g *group) revokeProposals(refs [][]byte) error {
	for _, r := range refs {
		i := slices.IndexFunc(g.proposals, func(p pendingProposal) bool { return bytes.Equal(p.ref, r) })
		if i < 0 {
			return errors.New("revoke: unknown proposal reference")
		}
		g.proposals = slices.Delete(g.proposals, i, i+1)
	}
	return nil
}

// applyCommit processes a commit from another member (RFC 9420 §12.4.2)
// and returns the group in the next epoch; g is left as it was.
func (g *group) applyCommit(f *framedContent) (*group, error) {
	if f.contentType != contentCommit || f.senderType != senderMember {
		return nil, errors.New("commit: DAVE commits come from members")
	}
	if !bytes.Equal(f.groupID, g.ctx.groupID) || f.epoch != g.ctx.epoch {
		return nil, fmt.Errorf("commit: for epoch %d, group is at %d", f.epoch, g.ctx.epoch)
	}
	if f.senderIndex >= g.tree.leaves() || g.tree.leaf(f.senderIndex) == nil {
		return nil, fmt.Errorf("commit: sender %d is not a member", f.senderIndex)
	}
	if f.senderIndex == g.own {
		return nil, errors.New("commit: sent by this member, which does not commit")
	}
	// §6.2: membership tag over AuthenticatedContentTBM, then signature.
	tbs := f.tbs(&g.ctx)
	if !hmac.Equal(mac(g.secrets.membership, append(slices.Clone(tbs), f.authRaw...)), f.membershipTag) {
		return nil, errors.New("commit: membership tag does not verify")
	}
	if err := verifyWithLabel(g.tree.leaf(f.senderIndex).signatureKey, "FramedContentTBS", tbs, f.signature); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}

	var props []*proposal
	for _, r := range f.commit.refs {
		i := slices.IndexFunc(g.proposals, func(p pendingProposal) bool { return bytes.Equal(p.ref, r) })
		if i < 0 {
			return nil, errors.New("commit: references a proposal this member has not received")
		}
		props = append(props, g.proposals[i].proposal)
	}
	next, _, added, removes, err := g.nextWith(props)
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if removes && f.commit.path == nil {
		return nil, errors.New("commit: removes members without an update path (RFC 9420 §12.4)")
	}
	next.ctx.epoch = g.ctx.epoch + 1

	commitSecret := make([]byte, hashSize)
	if f.commit.path != nil {
		if commitSecret, err = next.mergePath(f.senderIndex, f.commit.path, added); err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
	}
	next.ctx.treeHash = next.tree.rootHash()

	// §8.2: confirmed transcript hash over ConfirmedTranscriptHashInput.
	next.ctx.confirmedTranscriptHash = hash(g.interim, marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(wirePublic)
		b.AddBytes(f.raw)
		addOpaque(b, f.signature)
	}))
	joiner := expandWithLabel(extract(g.secrets.init, commitSecret), "joiner", next.ctx.bytes(), hashSize)
	next.secrets = keySchedule(joiner, nil, &next.ctx)
	if !hmac.Equal(mac(next.secrets.confirmation, next.ctx.confirmedTranscriptHash), f.confirmTag) {
		return nil, errors.New("commit: confirmation tag does not verify")
	}
	next.interim = interimTranscriptHash(next.ctx.confirmedTranscriptHash, f.confirmTag)
	return next, nil
}

// nextWith starts the next epoch's group from g with the proposals
// applied to the tree (RFC 9420 §12.3: removes, then adds), keeping the
// node keys of nodes still there. It returns the added key packages and
// their leaves, and whether anyone was removed.
func (g *group) nextWith(props []*proposal) (next *group, adds []*keyPackage, added []uint32, removes bool, err error) {
	next = &group{ctx: g.ctx, tree: g.tree.clone(), own: g.own, sig: g.sig, nodeKeys: map[uint32][]byte{}, senders: g.senders}
	next.ctx.epoch = g.ctx.epoch + 1
	oldKeys := maps.Clone(g.nodeKeys)
	for _, p := range props {
		if p.typ != proposalRemove {
			continue
		}
		if p.removed == g.own {
			return nil, nil, nil, false, ErrRemoved
		}
		for _, x := range directPath(leafNodeIndex(p.removed), next.tree.leaves()) {
			delete(oldKeys, x)
		}
		if err := next.tree.removeLeaf(p.removed); err != nil {
			return nil, nil, nil, false, err
		}
		removes = true
	}
	for _, p := range props {
		if p.typ == proposalAdd {
			adds = append(adds, p.add)
			added = append(added, next.tree.addLeaf(&p.add.leaf))
		}
	}
	for x, k := range oldKeys {
		if x < uint32(len(next.tree.nodes)) && next.tree.nodes[x] != nil {
			next.nodeKeys[x] = k
		}
	}
	return next, adds, added, removes, nil
}

// mergePath applies a commit's update path (RFC 9420 §7.5, §12.4.2): it
// checks the committer's new leaf, decrypts the path secret meant for us,
// derives and checks the new node keys, sets the parent hashes, and
// returns the commit secret. The tree already holds the proposals' changes;
// added are the leaves this commit added, which get no path secret.
func (g *group) mergePath(sender uint32, up *updatePath, added []uint32) ([]byte, error) {
	t := g.tree
	x := leafNodeIndex(sender)
	path := t.filteredDirectPath(x)
	if len(up.nodes) != len(path) {
		return nil, fmt.Errorf("update path: %d nodes for a filtered direct path of %d", len(up.nodes), len(path))
	}
	if up.leaf.source != sourceCommit {
		return nil, errors.New("update path: leaf node source is not commit")
	}
	if err := up.leaf.verify(g.ctx.groupID, sender); err != nil {
		return nil, fmt.Errorf("update path: %w", err)
	}

	// Which path node's secret is ours to decrypt, and with which key:
	// the first one above our leaf; its copath child's resolution (new
	// leaves left out) lists the recipients in order.
	own := leafNodeIndex(g.own)
	for i, p := range path {
		if inSubtree(own, p) {
			copathChild := left(p)
			if inSubtree(x, copathChild) {
				copathChild = right(p)
			}
			res := slices.DeleteFunc(t.resolution(copathChild), func(n uint32) bool {
				return level(n) == 0 && slices.Contains(added, n/2)
			})
			for j, n := range res {
				if _, ok := g.nodeKeys[n]; ok {
					slot, recipient := i, n
					if len(up.nodes[i].secrets) != len(res) {
						return nil, fmt.Errorf("update path: node %d has %d ciphertexts for a resolution of %d", p, len(up.nodes[i].secrets), len(res))
					}
					recipientSecret := up.nodes[i].secrets[j]
					// Merge the public keys first: the provisional group
					// context's tree hash covers them.
					if err := g.setPathKeys(x, path, up); err != nil {
						return nil, err
					}
					provisional := g.ctx
					provisional.treeHash = t.rootHash()
					secret, err := decryptWithLabel(g.nodeKeys[recipient], "UpdatePathNode", provisional.bytes(), recipientSecret)
					if err != nil {
						return nil, fmt.Errorf("update path: path secret for node %d: %w", p, err)
					}
					for _, q := range path[slot:] {
						kp, err := deriveHPKEKey(deriveSecret(secret, "node"))
						if err != nil {
							return nil, err
						}
						if !bytes.Equal(t.nodes[q].parent.encryptionKey, kp.pub) {
							return nil, fmt.Errorf("update path: derived key differs from node %d's public key", q)
						}
						g.nodeKeys[q] = kp.priv
						secret = deriveSecret(secret, "path")
					}
					return secret, nil
				}
			}
			return nil, fmt.Errorf("update path: no key of this member in the resolution under node %d", p)
		}
	}
	return nil, errors.New("update path: no path node above this member")
}

// setPathKeys merges a received update path into the tree (RFC 9420
// §7.5) and checks the committer's new leaf's parent_hash (§7.9).
func (g *group) setPathKeys(x uint32, path []uint32, up *updatePath) error {
	for _, p := range directPath(x, g.tree.leaves()) {
		delete(g.nodeKeys, p)
	}
	pubs := make([][]byte, len(up.nodes))
	for i, n := range up.nodes {
		pubs[i] = n.encryptionKey
	}
	if !bytes.Equal(g.tree.setPath(x, path, pubs), up.leaf.parentHash) {
		return errors.New("update path: the committer's leaf has the wrong parent_hash")
	}
	leaf := up.leaf
	g.tree.nodes[x] = &node{leaf: &leaf}
	return nil
}

// setPath blanks x's direct path, puts pubs on its filtered direct path
// (path) with no unmerged leaves, and sets their parent hashes from the
// root down, each the parent hash of the next node up with the copath
// child as sibling (RFC 9420 §7.5, §7.9). It returns the parent hash x's
// leaf must carry (empty for an empty path).
func (t *tree) setPath(x uint32, path []uint32, pubs [][]byte) []byte {
	for _, p := range directPath(x, t.leaves()) {
		t.nodes[p] = nil
	}
	for i, p := range path {
		t.nodes[p] = &node{parent: &parentNode{encryptionKey: pubs[i]}}
	}
	var leafHash []byte
	for i := len(path) - 1; i >= 0; i-- {
		below := x
		if i > 0 {
			below = path[i-1]
		}
		c := below // the child of path[i] on the way down to below
		for parent(c) != path[i] {
			c = parent(c)
		}
		ph := t.parentHash(path[i], sibling(c))
		if i > 0 {
			t.nodes[path[i-1]].parent.parentHash = ph
		} else {
			leafHash = ph
		}
	}
	return leafHash
}
