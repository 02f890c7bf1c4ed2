package dave

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"golang.org/x/crypto/cryptobyte"
)

// hexBytes decodes a test vector's hex strings.
type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

func loadVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/rfc9420/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func eq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s: got %x, want %x", what, got, want)
	}
}

func TestVectorsCryptoBasics(t *testing.T) {
	var vs []struct {
		RefHash struct {
			Label      string
			Value, Out hexBytes
		} `json:"ref_hash"`
		ExpandWithLabel struct {
			Secret, Context, Out hexBytes
			Label                string
			Length               int
		} `json:"expand_with_label"`
		DeriveSecret struct {
			Secret, Out hexBytes
			Label       string
		} `json:"derive_secret"`
		DeriveTreeSecret struct {
			Secret, Out hexBytes
			Label       string
			Generation  uint32
			Length      int
		} `json:"derive_tree_secret"`
		SignWithLabel struct {
			Priv, Pub, Content, Signature hexBytes
			Label                         string
		} `json:"sign_with_label"`
		EncryptWithLabel struct {
			Priv, Pub, Context, Plaintext, Ciphertext hexBytes
			KEMOutput                                 hexBytes `json:"kem_output"`
			Label                                     string
		} `json:"encrypt_with_label"`
	}
	loadVectors(t, "crypto-basics", &vs)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vs {
		eq(t, "RefHash", refHash(v.RefHash.Label, v.RefHash.Value), v.RefHash.Out)
		e := v.ExpandWithLabel
		eq(t, "ExpandWithLabel", expandWithLabel(e.Secret, e.Label, e.Context, e.Length), e.Out)
		eq(t, "DeriveSecret", deriveSecret(v.DeriveSecret.Secret, v.DeriveSecret.Label), v.DeriveSecret.Out)
		// DeriveTreeSecret is the hash ratchet step DAVE's key ratchet uses.
		d := v.DeriveTreeSecret
		eq(t, "DeriveTreeSecret", expandWithLabel(d.Secret, d.Label, binary.BigEndian.AppendUint32(nil, d.Generation), d.Length), d.Out)

		s := v.SignWithLabel
		if err := verifyWithLabel(s.Pub, s.Label, s.Content, s.Signature); err != nil {
			t.Errorf("VerifyWithLabel of the vector's signature: %v", err)
		}
		priv := signingKeyFromScalar(t, s.Priv)
		eq(t, "signature public key", signaturePublicKey(priv), s.Pub)
		sig, err := signWithLabel(priv, s.Label, s.Content)
		if err != nil {
			t.Fatal(err)
		}
		if err := verifyWithLabel(s.Pub, s.Label, s.Content, sig); err != nil {
			t.Errorf("VerifyWithLabel of our signature: %v", err)
		}
		if err := verifyWithLabel(s.Pub, s.Label+"x", s.Content, sig); err == nil {
			t.Error("a signature verified under another label")
		}

		c := v.EncryptWithLabel
		pt, err := decryptWithLabel(c.Priv, c.Label, c.Context, hpkeCiphertext{kemOutput: c.KEMOutput, ciphertext: c.Ciphertext})
		if err != nil {
			t.Fatalf("DecryptWithLabel: %v", err)
		}
		eq(t, "DecryptWithLabel", pt, c.Plaintext)
		// And our own encryption to the vector's key opens with it.
		ct, err := encryptWithLabel(rand.Reader, c.Pub, c.Label, c.Context, c.Plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := decryptWithLabel(c.Priv, c.Label, c.Context, ct); err != nil || !bytes.Equal(pt, c.Plaintext) {
			t.Errorf("EncryptWithLabel round trip: %x, %v", pt, err)
		}
	}
}

func signingKeyFromScalar(t *testing.T, d []byte) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestVectorsTreeMath(t *testing.T) {
	var vs []struct {
		NLeaves                      uint32 `json:"n_leaves"`
		NNodes                       uint32 `json:"n_nodes"`
		Root                         uint32
		Left, Right, Parent, Sibling []*uint32
	}
	loadVectors(t, "tree-math", &vs)
	for _, v := range vs {
		if nodeWidth(v.NLeaves) != v.NNodes || root(v.NLeaves) != v.Root {
			t.Errorf("%d leaves: width %d root %d, want %d %d", v.NLeaves, nodeWidth(v.NLeaves), root(v.NLeaves), v.NNodes, v.Root)
		}
		for x := range v.NNodes {
			check := func(what string, want *uint32, got func(uint32) uint32, defined bool) {
				if want == nil {
					return
				}
				if !defined || got(x) != *want {
					t.Errorf("%d leaves: %s(%d) want %d", v.NLeaves, what, x, *want)
				}
			}
			check("left", v.Left[x], left, level(x) > 0)
			check("right", v.Right[x], right, level(x) > 0)
			check("parent", v.Parent[x], parent, x != v.Root)
			check("sibling", v.Sibling[x], sibling, x != v.Root)
		}
	}
}

func TestVectorsKeySchedule(t *testing.T) {
	var vs []struct {
		GroupID           hexBytes `json:"group_id"`
		InitialInitSecret hexBytes `json:"initial_init_secret"`
		Epochs            []struct {
			TreeHash                hexBytes `json:"tree_hash"`
			CommitSecret            hexBytes `json:"commit_secret"`
			PSKSecret               hexBytes `json:"psk_secret"`
			ConfirmedTranscriptHash hexBytes `json:"confirmed_transcript_hash"`
			GroupContext            hexBytes `json:"group_context"`
			JoinerSecret            hexBytes `json:"joiner_secret"`
			InitSecret              hexBytes `json:"init_secret"`
			ExporterSecret          hexBytes `json:"exporter_secret"`
			EpochAuthenticator      hexBytes `json:"epoch_authenticator"`
			ConfirmationKey         hexBytes `json:"confirmation_key"`
			MembershipKey           hexBytes `json:"membership_key"`
			ExternalSecret          hexBytes `json:"external_secret"`
			ExternalPub             hexBytes `json:"external_pub"`
			Exporter                struct {
				Label           string // used as it is, not hex-decoded
				Context, Secret hexBytes
				Length          int
			}
		}
	}
	loadVectors(t, "key-schedule", &vs)
	for _, v := range vs {
		init := v.InitialInitSecret
		for n, e := range v.Epochs {
			ctx := groupContext{groupID: v.GroupID, epoch: uint64(n), treeHash: e.TreeHash, confirmedTranscriptHash: e.ConfirmedTranscriptHash}
			eq(t, "GroupContext", ctx.bytes(), e.GroupContext)
			joiner := expandWithLabel(extract(init, e.CommitSecret), "joiner", ctx.bytes(), hashSize)
			eq(t, "joiner_secret", joiner, e.JoinerSecret)
			s := keySchedule(joiner, e.PSKSecret, &ctx)
			eq(t, "init_secret", s.init, e.InitSecret)
			eq(t, "exporter_secret", s.exporter, e.ExporterSecret)
			eq(t, "epoch_authenticator", s.epochAuthenticator, e.EpochAuthenticator)
			eq(t, "confirmation_key", s.confirmation, e.ConfirmationKey)
			eq(t, "membership_key", s.membership, e.MembershipKey)
			// KEM.DeriveKeyPair, which tree nodes' keys come from too.
			kp, err := deriveHPKEKey(e.ExternalSecret)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "external_pub", kp.pub, e.ExternalPub)
			g := group{secrets: s}
			eq(t, "MLS-Exporter", g.exporter(e.Exporter.Label, e.Exporter.Context, e.Exporter.Length), e.Exporter.Secret)
			init = s.init
		}
	}
}

func TestVectorsTreeValidation(t *testing.T) {
	var vs []struct {
		Tree        hexBytes
		GroupID     hexBytes   `json:"group_id"`
		TreeHashes  []hexBytes `json:"tree_hashes"`
		Resolutions [][]uint32
	}
	loadVectors(t, "tree-validation", &vs)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	tampered := 0
	for i, v := range vs {
		// The vector's tree is the bare vector<optional<Node>>.
		tr, err := readTree(v.Tree)
		if err != nil {
			t.Fatalf("tree %d: %v", i, err)
		}
		if !bytes.Equal(tr.bytes(), v.Tree) {
			t.Errorf("tree %d does not re-encode to the same bytes", i)
		}
		for x := range v.TreeHashes {
			eq(t, "tree hash", tr.treeHash(uint32(x), nil), v.TreeHashes[x])
			got := tr.resolution(uint32(x))
			if len(got) != len(v.Resolutions[x]) {
				t.Errorf("tree %d: resolution(%d) = %v, want %v", i, x, got, v.Resolutions[x])
				continue
			}
			for j := range got {
				if got[j] != v.Resolutions[x][j] {
					t.Errorf("tree %d: resolution(%d) = %v, want %v", i, x, got, v.Resolutions[x])
				}
			}
		}
		if err := validateTree(tr, v.GroupID); err != nil {
			t.Errorf("tree %d: %v", i, err)
		}
		// A changed parent hash must break §7.9.2's check.
		for x := 1; x < len(tr.nodes); x += 2 {
			if n := tr.nodes[x]; n != nil && len(n.parent.parentHash) > 0 {
				n.parent.parentHash[0] ^= 1
				if err := tr.verifyParentHashes(); err == nil {
					t.Errorf("tree %d: a changed parent hash at node %d passed", i, x)
				}
				n.parent.parentHash[0] ^= 1
				tampered++
				break
			}
		}
	}
	if tampered == 0 {
		t.Error("no tree had a parent hash to tamper with")
	}
}

func TestVectorsWelcome(t *testing.T) {
	var vs []struct {
		InitPriv   hexBytes `json:"init_priv"`
		KeyPackage hexBytes `json:"key_package"`
		SignerPub  hexBytes `json:"signer_pub"`
		Welcome    hexBytes
	}
	loadVectors(t, "welcome", &vs)
	for _, v := range vs {
		kp := mlsKeyPackage(t, v.KeyPackage)
		gs, gi, err := openWelcome(v.Welcome, kp, v.InitPriv)
		if err != nil {
			t.Fatal(err)
		}
		if err := verifyWithLabel(v.SignerPub, "GroupInfoTBS", gi.tbs, gi.signature); err != nil {
			t.Fatal(err)
		}
		s := keySchedule(gs.joinerSecret, nil, &gi.context)
		eq(t, "confirmation tag", mac(s.confirmation, gi.context.confirmedTranscriptHash), gi.confirmTag)
	}
}

// mlsKeyPackage reads a key package wrapped in an MLSMessage (wire format
// mls_key_package, 5), as the vectors give them.
func mlsKeyPackage(t *testing.T, data []byte) *keyPackage {
	t.Helper()
	s := cryptobyte.String(data)
	var version, wire uint16
	if !s.ReadUint16(&version) || !s.ReadUint16(&wire) || wire != 5 {
		t.Fatalf("not a key package message: %x", data[:4])
	}
	kp, err := parseKeyPackage(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.validate(); err != nil {
		t.Fatal(err)
	}
	return kp
}

func TestVectorsPassiveClientWelcome(t *testing.T) {
	var vs []struct {
		KeyPackage                hexBytes `json:"key_package"`
		EncryptionPriv            hexBytes `json:"encryption_priv"`
		InitPriv                  hexBytes `json:"init_priv"`
		Welcome                   hexBytes
		InitialEpochAuthenticator hexBytes `json:"initial_epoch_authenticator"`
	}
	loadVectors(t, "passive-client-welcome", &vs)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	withPath := 0
	for i, v := range vs {
		kp := mlsKeyPackage(t, v.KeyPackage)
		g, err := joinGroup(v.Welcome, kp, v.InitPriv, v.EncryptionPriv, nil)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		eq(t, "epoch authenticator", g.secrets.epochAuthenticator, v.InitialEpochAuthenticator)
		if len(g.nodeKeys) > 1 {
			withPath++
		}
	}
	// Some Welcomes carry a path secret, whose node keys are checked.
	if withPath == 0 {
		t.Error("no vector exercised a Welcome's path secret")
	}
	t.Logf("%d of %d Welcomes carried a path secret", withPath, len(vs))
}
