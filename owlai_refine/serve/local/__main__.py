"""``python -m owlai_refine.serve.local``: fetch the embedded server's model now and print its
path (CI warms the cache with it)."""

from owlai_refine.serve.local import ensure_model

if __name__ == "__main__":
    print(ensure_model())  # noqa: T201 - this is the command's output
