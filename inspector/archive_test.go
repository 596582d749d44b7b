package inspector

import (
	"context"
	"strings"
	"testing"
)

// TestArchivedShown: the threads page marks an archived thread.
func TestArchivedShown(t *testing.T) {
	f := newFixture(t)
	if _, body := f.get(t, "/s/acme/"); strings.Contains(body, "(archived)") {
		t.Fatalf("a thread is shown archived before any is")
	}
	if _, err := f.st.ArchiveThread(context.Background(), "acme", "experiment"); err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, "/s/acme/")
	if !strings.Contains(body, ">experiment</a> (archived)</td>") {
		t.Errorf("the archived thread is not marked:\n%s", body)
	}
	if strings.Contains(body, ">main</a> (archived)") {
		t.Errorf("a thread that is not archived is marked")
	}
}
