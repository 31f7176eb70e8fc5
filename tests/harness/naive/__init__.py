"""A FastAPI app that sends date-times without a timezone, as many real Python APIs do."""
