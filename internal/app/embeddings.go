package app

import (
	"quarry/internal/library"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// localOptions are the local source's options for s: semantic retrieval
// over st's vectors when an embeddings provider is configured, none
// otherwise (the library then ranks by words alone, as it always has).
// Each call has its own in-memory vectors, read on first use.
func localOptions(s Search, st *store.Store) ([]local.Option, error) {
	client, err := embed.New(s.Embed)
	if err != nil || client == nil {
		return nil, err
	}
	return []local.Option{local.WithSemantic(library.NewSemantic(st, client))}, nil
}

// startEmbedding starts embedding the library in the background when an
// embeddings provider is configured (nil otherwise); the workers' context
// stops it and Close waits for it.
func (a *App) startEmbedding() error {
	client, err := embed.New(a.cfg.Search.Embed)
	if err != nil || client == nil {
		return err
	}
	a.embedding = library.NewEmbedding(a.store, client, library.EmbeddingOptions{Batch: embed.DefaultBatch, Logger: a.logger})
	a.embedding.Start(a.workerCtx)
	return nil
}
