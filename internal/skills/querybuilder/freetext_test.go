package querybuilder_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills/querybuilder"
)

// TestReadFeedback: what a researcher writes in the review's feedback box,
// across fields, and the terms they want and do not want. The first row is
// issue 16's: "not only medical imaging" became the exclusion
// -"medical imaging" and ImageNet and vision transformers were ignored.
func TestReadFeedback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text           string
		want, unwanted []string
	}{
		{"Good start, but not only medical imaging: I also want ImageNet and vision transformers.", []string{"medical imaging", "ImageNet", "vision transformers"}, nil},
		{"Less on rodent models, more on human trials.", []string{"human trials"}, []string{"rodent models"}},
		{"Please exclude case reports.", nil, []string{"case reports"}},
		{"No animal studies please", nil, []string{"animal"}},
		{"Without pediatric populations.", nil, []string{"pediatric populations"}},
		{`More on "memory consolidation" and less on "sleep apnea".`, []string{"memory consolidation"}, []string{"sleep apnea"}},
		{"These are not relevant.", nil, nil},
		{"Not what I was looking for.", nil, nil},
		{"Focus on randomized controlled trials.", []string{"randomized controlled trials"}, nil},
		{"The Viewstamped Replication paper is exactly right, more like that.", []string{"Viewstamped Replication"}, nil},
		{"Prospect Theory is irrelevant here.", nil, []string{"Prospect Theory"}},
		{"Too many papers about computer memory.", nil, []string{"computer memory"}},
		{"I'd like more about BERT and GPT-4 fine-tuning.", []string{"BERT", "GPT-4 fine-tuning"}, nil},
		{"Include COVID-19 studies too.", []string{"COVID-19"}, nil},
		{"Not interested in qualitative interviews.", nil, []string{"qualitative interviews"}},
		{"Drop the wastewater treatment papers.", nil, []string{"wastewater treatment"}},
		{"Avoid simulations, we need field measurements.", []string{"field measurements"}, []string{"simulations"}},
		{"Remove anything on cryptocurrency.", nil, []string{"cryptocurrency"}},
		{"More about Raft and Paxos, less about blockchain consensus.", []string{"Raft", "Paxos"}, []string{"blockchain consensus"}},
		{"Nice set. Especially interested in fMRI connectivity.", []string{"fMRI connectivity"}, nil},
		{"Exclude reviews and meta-analyses.", nil, []string{"reviews", "meta-analyses"}},
		{"not X-ray crystallography but cryo-EM", []string{"cryo-EM"}, []string{"X-ray crystallography"}},
		{"I want more on soil microbiome, nitrogen fixation and legumes.", []string{"soil microbiome", "nitrogen fixation", "legumes"}, nil},
		{"Ignore the marketing literature, focus on supply chain resilience.", []string{"supply chain resilience"}, []string{"marketing"}},
		{"Skip preprints.", nil, []string{"preprints"}},
		{"Fewer theoretical models please.", nil, []string{"theoretical models"}},
		{"The results look good overall.", nil, nil},
		{"Thanks, this is great.", nil, nil},
		{"Not just deep learning; classical SVM baselines matter too.", []string{"deep learning", "SVM"}, nil},
		{"Stop showing me Alzheimer's mouse models.", nil, []string{"Alzheimer's mouse models"}},
		{"What about LiDAR and radar fusion?", []string{"LiDAR", "radar fusion"}, nil},
		{"More on adolescents rather than adults.", []string{"adolescents"}, []string{"adults"}},
		{"Consider heat pumps instead of gas boilers.", []string{"heat pumps"}, []string{"gas boilers"}},
		{"Papers on urban heat islands are very relevant.", []string{"urban heat islands"}, nil},
		{"Veterinary studies are off-topic.", nil, []string{"veterinary"}},
		{"Add microfinance and mobile money.", []string{"microfinance", "mobile money"}, nil},
		{"No more surveys of teachers, I need classroom observation studies.", []string{"classroom observation"}, []string{"surveys"}},
		{"Not limited to English-language sources.", []string{"English-language sources"}, nil},
		{"Exclude \"in vitro\" work.", nil, []string{"in vitro"}},
		{"Particularly the CRISPR screens.", []string{"CRISPR screens"}, nil},
		{"Less about policy, more about implementation fidelity.", []string{"implementation fidelity"}, []string{"policy"}},
		{"I found the ResNet and ViT comparisons useful.", []string{"ResNet", "ViT"}, nil},
		{"Leave out conference abstracts.", nil, []string{"conference abstracts"}},
		{"no", nil, nil},
		{"", nil, nil},
		{"Such as graph neural networks for molecules.", []string{"graph neural networks"}, nil},
		{"Exclude editorials, letters and commentaries.", nil, []string{"editorials", "letters", "commentaries"}},
	}
	require.GreaterOrEqual(t, len(tests), 40)
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			want, unwanted := querybuilder.ReadFeedback(tt.text)
			require.Equal(t, tt.want, want, "wanted")
			require.Equal(t, tt.unwanted, unwanted, "unwanted")
		})
	}
}
