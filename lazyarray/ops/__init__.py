"""Operations on lazy arrays, one module per family."""
