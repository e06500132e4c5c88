"""The PRIMEBench four-stage pipeline, the Capability Frontier and ResampledBench."""
