package shareddata

import "path/filepath"

// CorpusFiles are the two paper corpora (~170k records together) the
// library benchmarks import, inside Dir("corpus").
func CorpusFiles() []string {
	dir := Dir("corpus")
	return []string{
		filepath.Join(dir, "arxiv_cs_listings_2025_2026.jsonl.gz"),
		filepath.Join(dir, "paperlists_cs_venues.jsonl.gz"),
	}
}

// CorpusTopics are research topics of the kind the corpora (computer
// science papers) cover, typed as a researcher would: the library
// benchmarks ask them, the Boolean one in several shapes, the ranked one
// as a first search would.
func CorpusTopics() []string {
	return []string{
		`gaussian splatting`, `"neural radiance fields"`, `diffusion models image editing`, `"large language models" reasoning`,
		`retrieval augmented generation`, `vision language models hallucination`, `"reinforcement learning" robot manipulation`,
		`graph neural networks`, `"federated learning" privacy`, `adversarial robustness`, `"knowledge distillation"`,
		`text to video generation`, `"3d reconstruction" single image`, `autonomous driving planning`, `"chain of thought"`,
		`machine translation low resource`, `"named entity recognition"`, `speech recognition`, `semantic segmentation`,
		`"object detection" transformer`, `contrastive learning`, `"point cloud"`, `monocular depth estimation`,
		`"visual question answering"`, `mixture of experts`, `"in-context learning"`, `protein structure`, `code generation`,
		`"sentiment analysis"`, `pose estimation`, `"optical flow"`, `slam loop closure`, `recommendation systems`,
		`"time series" forecasting`, `anomaly detection`, `"domain adaptation"`, `bayesian optimization`, `"active learning"`,
		`"multi-agent" reinforcement`, `medical image segmentation`,
	}
}
