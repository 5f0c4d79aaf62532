"""Short pure-Python twins of the Cython cores in ext/; tests compare the two. One module each,
named as its core (ext/_<name>.pyx, built into tokfx._<name>):

    _alphabet      alphabet       the CJK-remapped alphabet
    _bpe_train     bpe_train      BPE and Scaffold-BPE merge loops
    _bpe_encode    bpe_encode     BPE encoding, with Scaffold-BPE's demolition
    _path_segment  path_segment   pathpiece-l, pathpiece-r and greedy segmentation
    _pathpiece_mi  pathpiece_mi   PathPiece's MI of each token occurrence
    _ngrams        ngrams         the most frequent n-grams (an initial vocabulary)
    _sage_loss     sage_loss      SaGe's ablation loss
    _word2vec      word2vec       skip-gram word2vec with negative sampling
    _neighbours    neighbours     distinct neighbours within a window
    _char_map      char_map       a character map over a str (Hugging Face normalizers)
    _precompiled   precompiled    `tokenizers`' Precompiled normalizer (UAX #29's cluster regex)

The inline code the cores share (ext/*.pxd) is mirrored in the twins of the cores that use it:
charsmap_trie.pxd by the charsmap's rules as a dict (tokfx.normalizers.charsmap decodes them),
cjk_remap.pxd by alphabet.cjk_symbols, symbol_trie.pxd by path_segment.token_ids (a dict),
shortest_path.pxd and greedy.pxd by path_segment.forward and path_segment.segment, viterbi32.pxd
and viterbi32_segments.pxd (the likelihood segmenter in float32) by unigram.viterbi and
unigram.viterbi32_segments.
_pretokenize has no twin here: its reference is the `regex` module. Two cores have their twin
where it also runs: _class_split's is the Python steps of tokfx.pre_tokenizers.huggingface
(split_spans), _hf_models's the models of tokfx.formats.huggingface_models (`tokenize`).
"""
