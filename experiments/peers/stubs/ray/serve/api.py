class Deployment: pass
