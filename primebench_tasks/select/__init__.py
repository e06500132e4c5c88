"""Item selectors with one scikit-learn-style contract (see select.base)."""
