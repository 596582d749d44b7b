package backendtest

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkSettingsList checks Settings: prefix listing per scope and thread,
// and the global namespace of scope "".
func checkSettingsList(t *testing.T, b backend.Backend) {
	ctx := context.Background()
	for _, kv := range [][3]string{{"", "", "token:a"}, {"", "", "token:b"}, {"", "", "other"}, {"s", "", "token:c"}, {"", "t", "token:d"}} {
		if err := b.PutSetting(ctx, kv[0], kv[1], kv[2], []byte("v"+kv[2])); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Settings(ctx, "", "", "token:")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["token:a"]) != "vtoken:a" || string(got["token:b"]) != "vtoken:b" {
		t.Fatalf("Settings(\"\", \"\", token:) = %q", got)
	}
	if err := b.PutSetting(ctx, "", "", "token:a", nil); err != nil {
		t.Fatal(err)
	}
	got, _ = b.Settings(ctx, "", "", "token:")
	if len(got) != 1 {
		t.Fatalf("after delete: %q", got)
	}
	got, _ = b.Settings(ctx, "", "", "")
	if len(got) != 2 {
		t.Fatalf("empty prefix lists all of the namespace: %q", got)
	}
	got, _ = b.Settings(ctx, "", "", "%")
	if len(got) != 0 {
		t.Fatalf("a prefix is literal, not a pattern: %q", got)
	}
}
