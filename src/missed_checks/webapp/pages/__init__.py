"""The web app's pages: one module per page, each with one Powertools ``Router`` (``router``), listed in
``functions/webapp/app.py``'s ``ROUTERS``."""
