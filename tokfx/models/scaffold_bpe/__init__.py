"""Scaffold-BPE: the trainer (`trainer`), over BPE's merge loop."""
