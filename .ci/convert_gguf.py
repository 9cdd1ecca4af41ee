"""(A copy of ../shared/servers/convert_gguf.py, so that CI needs nothing outside the repository.)

Convert the SmolLM2 GGUF into a plain Hugging Face folder that vLLM can serve.

usage: python convert_gguf.py GGUF_DIR GGUF_FILE OUT_DIR
Needs torch (CPU), transformers, gguf, accelerate. transformers dequantizes the GGUF but refuses to
save a GGUF-loaded model, so the weights are copied into a fresh LlamaForCausalLM and saved.
"""

import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

src_dir, gguf_file, out = sys.argv[1:4]
tok = AutoTokenizer.from_pretrained(src_dir, gguf_file=gguf_file)
loaded = AutoModelForCausalLM.from_pretrained(src_dir, gguf_file=gguf_file, dtype=torch.bfloat16)
cfg = loaded.config
cfg.quantization_config = None
del cfg.quantization_config
fresh = LlamaForCausalLM(cfg).to(torch.bfloat16)
fresh.load_state_dict({k: v.to(torch.bfloat16) for k, v in loaded.state_dict().items()})
fresh.generation_config = loaded.generation_config
tok.save_pretrained(out)
fresh.save_pretrained(out)
print(out)  # noqa: T201 - the script's output is the folder it wrote
