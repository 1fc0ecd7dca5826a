package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

func TestProjectsAndMembers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	addAccount(t, st, "ada", false)
	addAccount(t, st, "bob", false)
	addAccount(t, st, "cy", false)
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p1", Name: "sleep", CreatedBy: "ada"}, "ada"))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p2", Name: "Raft"}, "bob")) // created by its owner
	require.Equal(t, fault.EConflict, fault.ErrorCode(st.CreateProject(ctx, store.Project{ID: "p1", Name: "again"}, "ada")))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.CreateProject(ctx, store.Project{ID: "p3", Name: "orphan"}, "nobody")))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(st.CreateProject(ctx, store.Project{ID: "p4"}, "ada")), "a name is required")
	_, err := st.Project(ctx, "p3")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "the refused project was not kept")

	p, err := st.Project(ctx, "p1")
	require.NoError(t, err)
	require.Equal(t, store.Project{ID: "p1", Name: "sleep", CreatedBy: "ada", CreatedAt: *now}, p)
	all, err := st.Projects(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "Raft", all[0].Name, "by name, ignoring case")

	require.NoError(t, st.SetMember(ctx, "p2", "ada", store.RoleReviewer))
	mine, err := st.AccountProjects(ctx, "ada")
	require.NoError(t, err)
	require.Equal(t, []store.ProjectRole{
		{Project: store.Project{ID: "p2", Name: "Raft", CreatedBy: "bob", CreatedAt: *now}, Role: store.RoleReviewer},
		{Project: p, Role: store.RoleOwner},
	}, mine)
	none, err := st.AccountProjects(ctx, "cy")
	require.NoError(t, err)
	require.Empty(t, none)

	role, err := st.Role(ctx, "p2", "cy")
	require.NoError(t, err)
	require.Equal(t, "", role, "not a member")
	role, err = st.Role(ctx, "nowhere", "ada")
	require.NoError(t, err)
	require.Equal(t, "", role)

	// Add, then change a role; added_at stays.
	require.NoError(t, st.SetMember(ctx, "p1", "cy", store.RoleViewer))
	*now = now.Add(time.Hour)
	require.NoError(t, st.SetMember(ctx, "p1", "cy", store.RoleReviewer))
	members, err := st.Members(ctx, "p1")
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.Equal(t, "ada", members[0].ID)
	require.Equal(t, store.RoleOwner, members[0].Role)
	require.Equal(t, "cy", members[1].ID)
	require.Equal(t, store.RoleReviewer, members[1].Role)
	require.Equal(t, now.Add(-time.Hour), members[1].AddedAt)

	require.Equal(t, fault.EInvalid, fault.ErrorCode(st.SetMember(ctx, "p1", "cy", "admin")))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.SetMember(ctx, "p1", "nobody", store.RoleViewer)))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.SetMember(ctx, "nowhere", "cy", store.RoleViewer)))

	// The last owner can be neither demoted nor removed.
	err = st.SetMember(ctx, "p1", "ada", store.RoleViewer)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	err = st.RemoveMember(ctx, "p1", "ada")
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	require.NoError(t, st.SetMember(ctx, "p1", "ada", store.RoleOwner), "an owner staying owner is no demotion")
	require.NoError(t, st.SetMember(ctx, "p1", "cy", store.RoleOwner))
	require.NoError(t, st.SetMember(ctx, "p1", "ada", store.RoleViewer))
	require.NoError(t, st.RemoveMember(ctx, "p1", "ada"))
	err = st.RemoveMember(ctx, "p1", "ada")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "not a member any more")
	err = st.RemoveMember(ctx, "p1", "cy")
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "cy is now the last owner")
}

// TestRunProjects: a run keeps its project; a child run without one takes
// its parent's; a fork and a run started at a stage keep theirs.
func TestRunProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	run := func(id, project string, parent *engine.Parent) engine.Run {
		return engine.Run{ID: id, Workflow: "search", Status: engine.StatusPending, Iteration: 1,
			CreatedAt: *now, UpdatedAt: *now, Project: project, Parent: parent}
	}
	require.NoError(t, st.CreateRun(ctx, run("parent", "p1", nil)))
	require.NoError(t, st.CreateRun(ctx, run("child", "", &engine.Parent{RunID: "parent", Step: "sub"})))
	require.NoError(t, st.CreateRun(ctx, run("grandchild", "", &engine.Parent{RunID: "child", Step: "sub"})))
	require.NoError(t, st.CreateRun(ctx, run("own", "p2", &engine.Parent{RunID: "parent", Step: "sub"})))
	require.NoError(t, st.CreateRun(ctx, run("none", "", nil)))
	require.NoError(t, st.CreateRun(ctx, run("orphan", "", &engine.Parent{RunID: "none", Step: "sub"})))
	require.NoError(t, st.CreateFork(ctx, run("fork", "p1", nil), engine.ForkOrigin{Run: "parent", Checkpoint: "cp", By: "ada"}))
	require.NoError(t, st.CreateRunAt(ctx, run("staged", "p3", nil), engine.StartOrigin{Stage: "review", By: "ada"}))

	want := map[string]string{"parent": "p1", "child": "p1", "grandchild": "p1", "own": "p2", "none": "", "orphan": "", "fork": "p1", "staged": "p3"}
	ids := make([]string, 0, len(want))
	for id, project := range want {
		got, err := st.RunProject(ctx, id)
		require.NoError(t, err)
		require.Equal(t, project, got, id)
		r, err := st.Run(ctx, id)
		require.NoError(t, err)
		require.Equal(t, project, r.Project, id)
		ids = append(ids, id)
	}
	runs, err := st.Runs(ctx, ids)
	require.NoError(t, err)
	require.Len(t, runs, len(want))
	for _, r := range runs {
		require.Equal(t, want[r.ID], r.Project, r.ID)
	}
	_, err = st.RunProject(ctx, "unknown")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}

// TestListRunsByProject: nil lists every run, a list those of its
// projects, an empty list none.
func TestListRunsByProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	for i, c := range []struct {
		id, project string
		status      engine.Status
	}{{"a", "p1", engine.StatusPending}, {"b", "p1", engine.StatusFailed}, {"c", "p2", engine.StatusPending}, {"d", "", engine.StatusPending}} {
		at := now.Add(time.Duration(i) * time.Minute)
		require.NoError(t, st.CreateRun(ctx, engine.Run{ID: c.id, Workflow: "search", Params: engine.Params{"question": c.id},
			Status: c.status, Iteration: 1, CreatedAt: at, UpdatedAt: at, Project: c.project}))
	}
	list := func(f store.RunFilter) ([]string, int) {
		t.Helper()
		f.TextParam, f.Limit = "question", 10
		got, err := st.ListRuns(ctx, f)
		require.NoError(t, err)
		return runIDs(got.Runs), got.Total
	}
	ids, total := list(store.RunFilter{})
	require.Equal(t, []string{"d", "c", "b", "a"}, ids)
	require.Equal(t, 4, total)
	ids, total = list(store.RunFilter{Projects: []string{"p1"}})
	require.Equal(t, []string{"b", "a"}, ids)
	require.Equal(t, 2, total)
	ids, _ = list(store.RunFilter{Projects: []string{"p1", "p2"}})
	require.Equal(t, []string{"c", "b", "a"}, ids)
	ids, total = list(store.RunFilter{Projects: []string{}})
	require.Empty(t, ids)
	require.Zero(t, total)
	ids, total = list(store.RunFilter{Projects: []string{"p1"}, Status: engine.StatusPending})
	require.Equal(t, []string{"a"}, ids)
	require.Equal(t, 1, total)
	ids, _ = list(store.RunFilter{Projects: []string{"p1", "p2"}, Text: "c"})
	require.Equal(t, []string{"c"}, ids)
}
