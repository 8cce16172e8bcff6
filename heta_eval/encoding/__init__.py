"""Dense encoding: the sentence-transformers model on its route (:mod:`.dense`), the routes
and the one ``precision="auto"`` takes on each kind of CPU (:mod:`.routes`,
:mod:`.route_defaults`, :mod:`.precision`, :mod:`.cpu`), the int8 runtimes (:mod:`.onnx_int8`,
:mod:`.openvino_int8`), how texts are tokenized and shaped so a vector depends on its text
only (:mod:`.tokenization`, :mod:`.shapes`), and the embeddings kept on disk
(:mod:`.embedding_cache`, :mod:`.partial_embeddings`). docs/encoding.md.

Import the modules themselves: this package's import loads nothing (torch loads with a model).
"""
