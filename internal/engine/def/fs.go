package def

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Loaded is one file of a directory of definitions: Def is nil or partial
// when Err is set, and such a file must not start runs.
type Loaded struct {
	File string
	Def  *Definition
	Err  error
}

// LoadFS loads every *.yaml and *.yml file at the top of fsys (the
// embedded built-ins, or QUARRY_WORKFLOWS_DIR through os.DirFS), in name
// order. A bad file is returned with its problems and the others load on;
// a second file using a metadata.name already taken is an error on that
// file. Only reading the directory itself can fail.
func LoadFS(fsys fs.FS, opt Options) ([]Loaded, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("def: read workflow directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		ext := strings.ToLower(path.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	byName := map[string]string{}
	out := make([]Loaded, 0, len(names))
	for _, n := range names {
		l := Loaded{File: n}
		src, err := readLimited(fsys, n)
		if err != nil {
			l.Err = Errors{{File: n, Line: 1, Col: 1, Msg: err.Error()}}
			out = append(out, l)
			continue
		}
		l.Def, l.Err = Load(n, src, opt)
		if l.Err == nil {
			if first, dup := byName[l.Def.Metadata.Name]; dup {
				l.Err = Errors{{File: n, Line: 1, Col: 1, Msg: fmt.Sprintf("workflow %q is already defined in %s", l.Def.Metadata.Name, first)}}
			} else {
				byName[l.Def.Metadata.Name] = n
			}
		}
		out = append(out, l)
	}
	return out, nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if info.Size() > MaxFileSize {
		return nil, fmt.Errorf("the file is larger than %d bytes", MaxFileSize)
	}
	return fs.ReadFile(fsys, name)
}
