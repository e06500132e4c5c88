"""Item embeddings: the vision-dependence score and the fixed random projection."""
