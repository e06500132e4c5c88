"""Any OpenAI-compatible chat endpoint as an engine of the run (#81; entry point
:mod:`.plugin`, ``--engine openai``): ``vllm serve``, SGLang, LMDeploy, TGI or a hosted API, by
URL and served model name. :mod:`.client` is the shared client — vLLM's server mode uses it too —;
the verbs, loops and reports are the run layer's, reached through :mod:`harness_adapters.run.plug`."""
