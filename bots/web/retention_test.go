package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type retentionOut struct {
	Workspace string  `json:"workspace"`
	KeepDays  *int    `json:"keep_days"`
	ExportDir string  `json:"export_dir"`
	UpdatedAt *string `json:"updated_at"`
}

// TestRetentionThroughTheAPI: members read a workspace's retention, only
// its owner sets it, and only the operator names an export directory.
func TestRetentionThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := startWithPeople(t, open(t))
		ana, cy, dee, bo := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		s.as(t, ana, "POST", "/api/workspaces/"+a.ID+"/members", fmt.Sprintf(`{"person":%q,"role":"admin"}`, cy), http.StatusCreated, nil)
		s.as(t, ana, "POST", "/api/workspaces/"+a.ID+"/members", fmt.Sprintf(`{"person":%q}`, dee), http.StatusCreated, nil)
		path := "/api/workspaces/" + a.ID + "/retention"

		var got retentionOut
		s.as(t, dee, "GET", path, "", http.StatusOK, &got)
		if got.KeepDays != nil || got.Workspace != a.ID {
			t.Fatalf("a new workspace's retention: %+v; want keep_days null (forever)", got)
		}
		s.as(t, bo, "GET", path, "", http.StatusNotFound, nil)
		s.as(t, cy, "PUT", path, `{"keep_days":30}`, http.StatusForbidden, nil)
		s.as(t, dee, "PUT", path, `{"keep_days":30}`, http.StatusForbidden, nil)
		s.as(t, ana, "PUT", path, `{"keep_days":30,"export_dir":"/srv/exports"}`, http.StatusForbidden, nil)
		s.as(t, ana, "PUT", path, `{"keep_days":-3}`, http.StatusBadRequest, nil)
		s.as(t, ana, "PUT", path, `{"keep_days":30,"days":2}`, http.StatusBadRequest, nil)
		s.as(t, ana, "PUT", path, `{"keep_days":30}`, http.StatusOK, &got)
		if got.KeepDays == nil || *got.KeepDays != 30 || got.UpdatedAt == nil {
			t.Fatalf("after the owner set 30 days: %+v", got)
		}
		s.as(t, uuid.Nil, "PUT", path, `{"keep_days":7,"export_dir":"relative"}`, http.StatusBadRequest, nil)
		s.as(t, uuid.Nil, "PUT", path, `{"keep_days":7,"export_dir":"/srv/exports/"}`, http.StatusOK, nil)
		s.as(t, dee, "GET", path, "", http.StatusOK, &got)
		if got.KeepDays == nil || *got.KeepDays != 7 || got.ExportDir != "/srv/exports" {
			t.Fatalf("the retention the operator set, read by a member: %+v", got)
		}
		// The owner changes the days; the operator's export stays, and
		// only the operator removes it.
		s.as(t, ana, "PUT", path, `{"keep_days":14}`, http.StatusOK, &got)
		if got.KeepDays == nil || *got.KeepDays != 14 || got.ExportDir != "/srv/exports" {
			t.Fatalf("after the owner set 14 days: %+v; want the export directory kept", got)
		}
		s.as(t, ana, "PUT", path, `{"keep_days":14,"export_dir":""}`, http.StatusForbidden, nil)
		var off retentionOut
		s.as(t, ana, "PUT", path, `{"keep_days":null}`, http.StatusOK, &off)
		if off.KeepDays != nil || off.ExportDir != "" {
			t.Fatalf("after keep_days null: %+v; want forever with no export", off)
		}
		s.as(t, uuid.Nil, "GET", "/api/workspaces/"+uuid.NewString()+"/retention", "", http.StatusNotFound, nil)
	})
}

// TestForgetThroughTheAPI: only the operator forgets a person; the
// person's token stops working, the answer counts what went, the audit
// records it, and a second forget counts nothing.
func TestForgetThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := startWithPeople(t, open(t))
		ana, dee := uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		s.as(t, ana, "POST", "/api/workspaces/"+a.ID+"/members", fmt.Sprintf(`{"person":%q}`, dee), http.StatusCreated, nil)
		s.as(t, dee, "GET", "/api/workspaces", "", http.StatusOK, nil) // issues Dee's token

		path := "/api/people/" + dee.String() + "/forget"
		s.as(t, ana, "POST", path, `{}`, http.StatusForbidden, nil)
		s.as(t, dee, "POST", path, `{}`, http.StatusForbidden, nil)
		s.as(t, uuid.Nil, "POST", "/api/people/dee/forget", `{}`, http.StatusBadRequest, nil)
		var res struct {
			Person         string `json:"person"`
			DeleteMessages bool   `json:"delete_messages"`
			APIKeys        int    `json:"api_keys"`
			Memberships    int    `json:"memberships"`
		}
		s.as(t, uuid.Nil, "POST", path, `{"delete_messages":true}`, http.StatusOK, &res)
		if res.Person != dee.String() || !res.DeleteMessages || res.APIKeys != 1 || res.Memberships != 1 {
			t.Fatalf("forgetting Dee: %+v; want her token and membership counted", res)
		}
		s.as(t, dee, "GET", "/api/workspaces", "", http.StatusUnauthorized, nil)
		s.as(t, ana, "GET", "/api/workspaces/"+a.ID, "", http.StatusOK, nil) // Ana is untouched

		var audit struct {
			Records []struct {
				Action string `json:"action"`
				Actor  string `json:"actor"`
			} `json:"records"`
		}
		s.as(t, uuid.Nil, "GET", "/api/audit?tool="+store.AuditForgetPerson, "", http.StatusOK, &audit)
		if len(audit.Records) != 1 || audit.Records[0].Actor != "operator" {
			t.Fatalf("the audit of the forget: %+v; want one row by the operator", audit.Records)
		}
		s.as(t, uuid.Nil, "POST", path, ``, http.StatusOK, &res)
		if res.APIKeys != 0 || res.Memberships != 0 {
			t.Fatalf("forgetting Dee again: %+v; want nothing left to count", res)
		}
	})
}
