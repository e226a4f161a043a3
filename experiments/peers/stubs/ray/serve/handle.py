class DeploymentHandle: pass
class RayServeHandle: pass
