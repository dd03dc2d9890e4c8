"""The Qt-widget-free half of the window: controllers, the view data and wording they emit."""
