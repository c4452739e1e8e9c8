package main

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The worked example of docs/shuffle.md, re-derived by this implementation of the page.
func TestWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/shuffle.md")
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) string {
		found := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(.+)$`).FindStringSubmatch(string(doc))
		if found == nil {
			t.Fatalf("docs/shuffle.md: no %q line in the worked example", name)
		}
		return strings.TrimSpace(found[1])
	}
	seed, err := hex.DecodeString(field("seed (hex)"))
	if err != nil {
		t.Fatal(err)
	}
	if b64, _ := base64.StdEncoding.DecodeString(field("seed (base64)")); string(b64) != string(seed) {
		t.Errorf("the base64 seed is not the hex seed")
	}
	if got := hex.EncodeToString(dealKey(seed, 1)); got != field("deal 1 key (hex)") {
		t.Errorf("deal key %s", got)
	}
	shape, _ := shapeFor("rummy40", 4, nil)
	deck := shuffle(unshuffledDeck(shape.packs, shape.jokers), dealKey(seed, 1))
	if len(deck) != 108 {
		t.Errorf("deck of %d cards", len(deck))
	}
	if got := strings.Join(deck[:10], " "); got != field("first ten cards") {
		t.Errorf("first ten cards %q, the page says %q", got, field("first ten cards"))
	}
}
