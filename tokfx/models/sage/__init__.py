"""SaGe: the trainer (`trainer`), its pieces and their greedy segmentation (`pieces`), and the
token embeddings it ablates with (`word2vec`)."""
